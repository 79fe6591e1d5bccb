"""``/`` and ``/conversations/{id}``: the conversation list and the timeline of typed cards."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace
from typing import Annotated
from urllib.parse import urlencode

from litestar import get
from litestar.exceptions import ValidationException
from litestar.params import FromQuery, QueryParameter
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Redirect, Template

from core.fields import MAX_INT32
from core.ingest import live_among
from web import masking, urls
from web.auth.access import PageController
from web.conversation_page import conversation_page
from web.conversations.pages import IndexPage, SaveControl, save_control
from web.conversations.snippets import snippets
from web.deps import RunsDep, SettingsDep, SourceDep
from web.list_query import COUNT_CAP, ListQuery
from web.replays.forms import RerunForms
from web.replays.reply_diff import diverged_replies
from web.source import Loaded, StoreSource
from web.timeline.seek import ROLE_FILTERS, SEEK_LABELS, SEEK_TARGETS, SeekTarget, anchor_at, next_position

Text = Annotated[str, QueryParameter(max_length=200)]
Cursor = Annotated[str | None, QueryParameter(max_length=300)]
MAX_RUNS_READ = 500
"""Runs read to find divergences: the newest ones (a conversation replayed more often is cut, not slow)."""


LIVE_TIMELINE = "timeline"
"""The id of the timeline element that polls while its conversation is live (``conversation.html``)."""


def _offset_of(loaded: Loaded, anchor: str, kind: str, size: int) -> int:
    """The offset of the page holding the card ``anchor``, in the timeline or in its ``kind`` filter."""
    if not kind:
        return loaded.timeline.page_of(anchor, size)
    position = loaded.timeline.position(anchor)
    positions = loaded.timeline.positions_of(kind)
    index = bisect_left(positions, position) if position is not None else 0
    return index // size * size


def _save_control(source: StoreSource, query: ListQuery, shown: int, *, more: bool) -> SaveControl | None:
    """ "Save these N as a suite" for a narrowed list (N counted past this page only when there is more)."""
    if not query.filtered or not shown:
        return None
    count = source.store.count_conversations(query.store_query(), COUNT_CAP) if more else shown
    return save_control(query, count, COUNT_CAP)


class ConversationController(PageController):
    """The conversation list and one conversation's timeline."""

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
        found = snippets(source.store, [c.conversation_id for c in result.items], query.q) if query.q else {}
        page = IndexPage(
            conversations=[masking.mask_value(s) for s in result.items],
            query=query,
            next_url=query.url(after=result.next_cursor) if result.next_cursor else None,
            empty_store=not result.items and not query.filtered and not query.after,
            snippets=found,
            save=_save_control(source, query, len(result.items), more=bool(result.next_cursor or query.after)),
            live=live_among(source.store, [c.conversation_id for c in result.items]),
        )
        return Template("conversations/index.html", context={"page": page})

    @get("/conversations/{conversation_id:str}", name="conversation", sync_to_thread=True)
    def conversation(
        self,
        request: HTMXRequest,
        conversation_id: urls.PathId,
        source: SourceDep,
        settings: SettingsDep,
        run_service: RunsDep,
        offset: Annotated[int, QueryParameter(ge=0, le=MAX_INT32)] = 0,
        through: Cursor = None,
        at: Cursor = None,
        kind: Annotated[str, QueryParameter(max_length=20)] = "",
        none: Annotated[str, QueryParameter(max_length=20)] = "",
    ) -> Template:
        """The timeline page; an htmx request gets only the next slice of cards (infinite scroll).

        ``through`` (a card's anchor, ``msg-<id>``) extends the slice until that card is in it,
        which is how a permalink or a call -> result jump reaches a card on a later page; ``at``
        opens the page that holds a card too far ahead for that. ``kind`` shows one role's cards
        only; ``none`` says that a seek (``/seek``) found nothing past ``at``.
        """
        conversation_id = urls.from_segment(conversation_id)
        if kind and kind not in ROLE_FILTERS:
            raise ValidationException(f"unknown kind {kind!r}; known: {', '.join(ROLE_FILTERS)}")
        loaded = source.load(conversation_id)
        if at is not None:
            offset = _offset_of(loaded, at, kind, settings.page_size)
        notice = ""
        if none in SEEK_LABELS:
            notice = f"No {SEEK_LABELS[none]} {'after this card' if at else 'in this conversation'}."
        rerun = RerunForms(conversation_id, run_service.choices())
        context = conversation_page(loaded, settings, rerun, offset, through, kind=kind, at=at, notice=notice)
        context = replace(context, live=bool(live_among(source.store, [conversation_id])))
        template = "timeline/_timeline_page.html" if request.htmx else "conversations/conversation.html"
        # htmx stops polling on 286: the timeline's last poll once the conversation stopped receiving spans.
        stop = bool(request.htmx) and request.htmx.trigger == LIVE_TIMELINE and not context.live
        # The same URL answers with a page or a fragment, so caches must key on HX-Request.
        return Template(
            template, context={"page": context}, headers={"Vary": "HX-Request"}, status_code=286 if stop else 200
        )

    @get("/conversations/{conversation_id:str}/seek", name="conversation-seek", sync_to_thread=True)
    def seek(
        self,
        conversation_id: urls.PathId,
        source: SourceDep,
        what: Annotated[str, QueryParameter(max_length=20)],
        after: Cursor = None,
    ) -> Redirect:
        """Open the page holding the next damaged record, error or divergence past the card ``after``.

        The browser then loads that one page (``?at=``), not every page before it.
        """
        conversation_id = urls.from_segment(conversation_id)
        if what not in SEEK_TARGETS:
            raise ValidationException(f"unknown target {what!r}; known: {', '.join(SEEK_TARGETS)}")
        target: SeekTarget = what
        loaded = source.load(conversation_id)
        timeline = loaded.timeline
        start = timeline.position(after) if after is not None else None
        diverged: set[str] = set()
        if target == "divergence" and loaded.summary.runs:
            runs, _ = source.store.list_runs(conversation_id, limit=MAX_RUNS_READ)
            diverged = diverged_replies(runs, timeline)
        found = next_position(timeline, target, start, diverged)
        base = urls.conversation(conversation_id)
        if found is None:
            query = urlencode({k: v for k, v in (("at", after), ("none", what)) if v})
            return Redirect(f"{base}?{query}" + (f"#{after}" if after else ""), status_code=303)
        anchor = anchor_at(timeline, found)
        return Redirect(f"{base}?{urlencode({'at': anchor})}#{anchor}", status_code=303)
