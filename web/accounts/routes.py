"""The accounts slice's route handlers: what ``web.app`` registers for it."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from web.accounts.controllers import AccountsController

ROUTES: list[ControllerRouterHandler] = [AccountsController]
