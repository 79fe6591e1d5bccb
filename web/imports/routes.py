"""The imports slice's route handlers: ``web.app`` mounts them on a router with the upload's own body limit."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from web.imports.controllers import ImportController

ROUTES: list[ControllerRouterHandler] = [ImportController]
