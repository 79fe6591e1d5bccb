"""The runs slice's route handlers: what ``web.app`` registers for it."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from web.runs.api import ApiRunsController
from web.runs.controllers import RunsApiController, RunsController
from web.runs.step_controllers import StepRunsApiController, StepRunsController

ROUTES: list[ControllerRouterHandler] = [
    RunsController,
    RunsApiController,
    ApiRunsController,
    StepRunsController,
    StepRunsApiController,
]
