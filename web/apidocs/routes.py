"""The API page slice's route handlers: what ``web.app`` registers for it."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from web.apidocs.controllers import ApiDocsController

ROUTES: list[ControllerRouterHandler] = [ApiDocsController]
