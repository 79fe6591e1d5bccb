"""The attachments slice's route handlers: what ``web.app`` registers for it."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from web.attachments.controllers import AttachmentController

ROUTES: list[ControllerRouterHandler] = [AttachmentController]
