"""The suites slice's route handlers: what ``web.app`` registers for it."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from web.suites.controllers import SuiteRunsApiController, SuitesController

ROUTES: list[ControllerRouterHandler] = [SuitesController, SuiteRunsApiController]
