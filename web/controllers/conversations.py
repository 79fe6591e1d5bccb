"""``/`` and ``/conversations/{id}``: the conversation list and the timeline of typed cards."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, QueryParameter
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template

from web.deps import SettingsDep, SourceDep, TimelinesDep
from web.listing import ListQuery, run_query
from web.pages import ConversationPage, IndexPage


class ConversationController(Controller):
    """The conversation list and one conversation's timeline."""

    include_in_schema = False  # pages, not API: the schema at /schema documents /api only

    @get("/", name="index")
    async def index(
        self,
        source: SourceDep,
        q: Annotated[str, QueryParameter(max_length=200)] = "",
        damaged: Annotated[bool, QueryParameter()] = False,
        after: Annotated[str | None, QueryParameter(max_length=300)] = None,
    ) -> Template:
        """The conversations, most recent first; the URL carries the search, the filter and the page."""
        query = ListQuery(q=q, damaged=damaged, after=after)
        summaries = source.conversations()
        result = run_query(summaries, query)
        page = IndexPage(
            conversations=result.rows,
            query=query,
            matched=result.matched,
            total=len(summaries),
            next_url=query.url(after=result.next_after) if result.next_after else None,
        )
        return Template("index.html", context={"page": page})

    @get("/conversations/{conversation_id:str}", name="conversation")
    async def conversation(
        self,
        request: HTMXRequest,
        conversation_id: FromPath[str],
        source: SourceDep,
        settings: SettingsDep,
        timelines: TimelinesDep,
        offset: Annotated[int, QueryParameter(ge=0)] = 0,
        through: Annotated[str | None, QueryParameter(max_length=300)] = None,
        at: Annotated[str | None, QueryParameter(max_length=300)] = None,
    ) -> Template:
        """The timeline page; an htmx request gets only the next slice of cards (infinite scroll).

        ``through`` (a card's anchor, ``msg-<id>``) extends the slice until that card is in it,
        which is how a permalink or a call -> result jump reaches a card on a later page; ``at``
        opens the page that holds a card too far ahead for that.
        """
        messages = source.messages(conversation_id)
        if messages is None:
            raise NotFoundException(f"No conversation with id {conversation_id!r}.")
        timeline = timelines.get(conversation_id, messages)
        if at is not None:
            offset = timeline.page_of(at, settings.page_size)
        page = timeline.page(offset, settings.page_size, through=through, max_through=settings.max_jump_cards)
        summary = next((s for s in source.conversations() if s.conversation_id == conversation_id), None)
        context = ConversationPage(
            conversation_id=conversation_id,
            title=summary.title if summary else conversation_id,
            timeline=page,
            page_size=settings.page_size,
            damaged=summary.damaged if summary else 0,
        )
        template = "_timeline_page.html" if request.htmx else "conversation.html"
        # The same URL answers with a page or a fragment, so caches must key on HX-Request.
        return Template(template, context={"page": context}, headers={"Vary": "HX-Request"})
