"""The timeline slice's route handlers: what ``web.app`` registers for it."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from web.timeline.controllers import RecordApiController, RecordController

ROUTES: list[ControllerRouterHandler] = [RecordController, RecordApiController]
