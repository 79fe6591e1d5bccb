"""The conversations slice's route handlers: what ``web.app`` registers for it."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from web.conversations.api import ConversationApiController
from web.conversations.controllers import ConversationController

ROUTES: list[ControllerRouterHandler] = [ConversationController, ConversationApiController]
