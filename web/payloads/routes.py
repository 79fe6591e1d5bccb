"""The payloads slice's route handlers: what ``web.app`` registers for it."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from web.payloads.api import PayloadApiController
from web.payloads.controllers import PayloadController

ROUTES: list[ControllerRouterHandler] = [PayloadController, PayloadApiController]
