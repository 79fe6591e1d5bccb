"""``/`` and ``/conversations/{id}``: the conversation list and the timeline of typed cards."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.params import FromQuery, QueryParameter
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template

from web import masking, urls
from web.deps import SettingsDep, SourceDep
from web.listing import ListQuery
from web.pages import ConversationPage, IndexPage
from web.settings import Settings
from web.source import Loaded

Text = Annotated[str, QueryParameter(max_length=200)]
Cursor = Annotated[str | None, QueryParameter(max_length=300)]


def conversation_page(
    loaded: Loaded, settings: Settings, offset: int = 0, through: str | None = None
) -> ConversationPage:
    """The timeline context for one slice of cards (shared with the payload page's card column)."""
    page = loaded.timeline.page(offset, settings.page_size, through=through, max_through=settings.max_jump_cards)
    summary = loaded.summary
    return ConversationPage(
        conversation_id=summary.conversation_id,
        title=masking.mask(summary.title) or "(no user text)",
        timeline=page,
        page_size=settings.page_size,
        damaged=summary.damaged,
        runs=summary.runs,
        provider=settings.default_provider,
    )


class ConversationController(Controller):
    """The conversation list and one conversation's timeline."""

    include_in_schema = False  # pages, not API: the schema at /schema documents /api only

    @get("/", name="index", sync_to_thread=True)
    def index(
        self,
        source: SourceDep,
        q: Text = "",
        damaged: FromQuery[bool] = False,
        runs: FromQuery[bool] = False,
        kind: Annotated[str, QueryParameter(max_length=40)] = "",
        sort: Annotated[str, QueryParameter(max_length=20)] = "recent",
        after: Cursor = None,
    ) -> Template:
        """The conversations, most recent first; the URL carries the search, the filters and the page."""
        query = ListQuery(q=q, damaged=damaged, runs=runs, kind=kind, sort=sort, after=after)
        result = source.list(query.store_query())
        page = IndexPage(
            conversations=[masking.mask_value(s) for s in result.items],
            query=query,
            next_url=query.url(after=result.next_cursor) if result.next_cursor else None,
            empty_store=not result.items and not query.filtered and not query.after,
        )
        return Template("index.html", context={"page": page})

    @get("/conversations/{conversation_id:str}", name="conversation", sync_to_thread=True)
    def conversation(
        self,
        request: HTMXRequest,
        conversation_id: urls.PathId,
        source: SourceDep,
        settings: SettingsDep,
        offset: Annotated[int, QueryParameter(ge=0)] = 0,
        through: Cursor = None,
        at: Cursor = None,
    ) -> Template:
        """The timeline page; an htmx request gets only the next slice of cards (infinite scroll).

        ``through`` (a card's anchor, ``msg-<id>``) extends the slice until that card is in it,
        which is how a permalink or a call -> result jump reaches a card on a later page; ``at``
        opens the page that holds a card too far ahead for that.
        """
        conversation_id = urls.from_segment(conversation_id)
        loaded = source.load(conversation_id)
        if at is not None:
            offset = loaded.timeline.page_of(at, settings.page_size)
        context = conversation_page(loaded, settings, offset, through)
        template = "_timeline_page.html" if request.htmx else "conversation.html"
        # The same URL answers with a page or a fragment, so caches must key on HX-Request.
        return Template(template, context={"page": context}, headers={"Vary": "HX-Request"})
