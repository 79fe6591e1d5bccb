"""The diff slice's route handlers: what ``web.app`` registers for it."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from web.diff.api import DiffApiController
from web.diff.controllers import DiffController

ROUTES: list[ControllerRouterHandler] = [DiffController, DiffApiController]
