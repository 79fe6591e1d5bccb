"""The check slice's route handlers: what ``web.app`` registers for it."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from web.check.controllers import CheckController

ROUTES: list[ControllerRouterHandler] = [CheckController]
