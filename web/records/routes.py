"""The records slice's route handlers: what ``web.app`` registers for it."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from web.records.controllers import RecordApiController, RecordController

ROUTES: list[ControllerRouterHandler] = [RecordController, RecordApiController]
