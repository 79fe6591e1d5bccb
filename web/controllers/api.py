"""``/api``: the conversations as JSON, for scripts and for the OpenAPI schema at ``/schema``.

Messages go out through ``core.MESSAGE_ADAPTER`` (the one JSON door), so an API
client reads exactly the stored format of FORMAT.md, subclasses and unknown keys
included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, QueryParameter

from core import MESSAGES_ADAPTER
from web.deps import SourceDep
from web.source import ConversationSummary

MAX_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class ConversationList:
    """Every conversation, most recent activity first."""

    conversations: list[ConversationSummary]


@dataclass(frozen=True, slots=True)
class ConversationMessages:
    """A window of one conversation's top-level messages, each with its trace, in the stored JSON format."""

    conversation_id: str
    total: int
    offset: int
    messages: list[dict[str, Any]]
    next_offset: int | None


class ApiController(Controller):
    """Read-only JSON views of the same data the pages show."""

    path = "/api"
    tags = ["conversations"]  # noqa: RUF012 - Litestar reads a class attribute

    @get("/conversations", name="api-conversations")
    async def conversations(self, source: SourceDep) -> ConversationList:
        """Every conversation with its counts (messages, trace records, damaged records) and last activity."""
        return ConversationList(conversations=list(source.conversations()))

    @get("/conversations/{conversation_id:str}", name="api-conversation")
    async def conversation(
        self,
        conversation_id: FromPath[str],
        source: SourceDep,
        offset: Annotated[int, QueryParameter(ge=0)] = 0,
        limit: Annotated[int, QueryParameter(ge=1, le=MAX_LIMIT)] = 100,
    ) -> ConversationMessages:
        """Top-level messages ``[offset, offset + limit)`` of one conversation, in order."""
        messages = source.messages(conversation_id)
        if messages is None:
            raise NotFoundException(f"No conversation with id {conversation_id!r}.")
        window = list(messages[offset : offset + limit])
        end = offset + len(window)
        return ConversationMessages(
            conversation_id=conversation_id,
            total=len(messages),
            offset=offset,
            messages=MESSAGES_ADAPTER.dump_python(window, mode="json"),
            next_offset=end if end < len(messages) else None,
        )
