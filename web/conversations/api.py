"""``/api/conversations``: the list and one conversation's messages as JSON, in the stored format (FORMAT.md).

Messages go out through ``core.MESSAGES_ADAPTER`` (the one JSON door), so an API
client reads exactly the stored format, subclasses and unknown keys included; trace text
goes out with its secrets masked, as the pages show it (``web.masking``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, get
from litestar.params import FromQuery, QueryParameter

from core import MESSAGES_ADAPTER
from core.accounts.roles import Role
from core.fields import MAX_INT32
from core.store import SORTS, ConversationSummary
from web import masking, urls
from web.auth.access import needs
from web.deps import SourceDep
from web.list_query import KIND_FILTERS, ListQuery

MAX_LIMIT = 500


Limit = Annotated[int, QueryParameter(ge=1, le=MAX_LIMIT)]


Cursor = Annotated[str | None, QueryParameter(max_length=300)]
# The schema names exactly the values the list takes (``web.list_query`` checks them); "" is no filter.
KindParam = Annotated[str, QueryParameter(max_length=40, schema_extra={"enum": ["", *KIND_FILTERS]})]
SortParam = Annotated[str, QueryParameter(max_length=20, schema_extra={"enum": list(SORTS)})]


@dataclass(frozen=True, slots=True)
class ConversationList:
    """One keyset page of conversations, most recent activity first; ``next_cursor`` fetches the next."""

    conversations: list[ConversationSummary]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class ConversationMessages:
    """A window of one conversation's top-level messages, each with its trace, in the stored JSON format."""

    conversation_id: str
    summary: ConversationSummary
    total: int
    offset: int
    messages: list[dict[str, Any]]
    next_offset: int | None


class ConversationApiController(Controller):
    """The conversation list and one conversation's messages, as JSON."""

    opt = needs(Role.VIEWER)

    path = "/api"
    after_request = staticmethod(masking.mask_response)  # trace text goes out masked, as on the pages

    @get("/conversations", name="api-conversations", tags=["conversations"], sync_to_thread=True)
    def conversations(
        self,
        source: SourceDep,
        q: Annotated[str, QueryParameter(max_length=200)] = "",
        damaged: FromQuery[bool] = False,
        runs: FromQuery[bool] = False,
        kind: KindParam = "",
        sort: SortParam = "recent",
        cursor: Cursor = None,
        limit: Limit = 50,
    ) -> ConversationList:
        """The list page's query as JSON: search, filters (damaged, has runs, contains a kind), keyset pages."""
        query = ListQuery(q=q, damaged=damaged, runs=runs, kind=kind, sort=sort, after=cursor, limit=limit)
        page = source.list(query.store_query())
        return ConversationList(conversations=list(page.items), next_cursor=page.next_cursor)

    @get("/conversations/{conversation_id:str}", name="api-conversation", tags=["conversations"], sync_to_thread=True)
    def conversation(
        self,
        conversation_id: urls.PathId,
        source: SourceDep,
        offset: Annotated[int, QueryParameter(ge=0, le=MAX_INT32)] = 0,
        limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 100,
    ) -> ConversationMessages:
        """Top-level messages ``[offset, offset + limit)`` of one conversation, in order, with its figures."""
        conversation_id = urls.from_segment(conversation_id)
        loaded = source.load(conversation_id)
        messages = loaded.messages
        window = list(messages[offset : offset + limit])
        end = offset + len(window)
        return ConversationMessages(
            conversation_id=conversation_id,
            summary=loaded.summary,
            total=len(messages),
            offset=offset,
            messages=MESSAGES_ADAPTER.dump_python(window, mode="json"),
            next_offset=end if end < len(messages) else None,
        )
