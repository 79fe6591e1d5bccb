"""The conversation list's query: search, filters and keyset pages over conversation summaries.

Until the store exists this runs in the web layer over ``TimelineSource.conversations()``;
the store will answer the same :class:`ListQuery` in SQL (values bound, never spliced)
and this module's :func:`run_query` becomes its in-memory reference. The search looks
at titles and ids only: full-text over message content belongs to the store's index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from web.source import ConversationSummary

PAGE_SIZE = 50


@dataclass(frozen=True, slots=True)
class ListQuery:
    """What the reader asked the list for; it round-trips through the URL."""

    q: str = ""
    damaged: bool = False
    after: str | None = None
    limit: int = PAGE_SIZE

    def url(self, **changes: object) -> str:
        """This query as a ``/?...`` URL, with some fields changed (e.g. ``after`` for the next page)."""
        fields = {"q": self.q, "damaged": self.damaged, "after": self.after, **changes}
        params = {k: ("1" if v is True else v) for k, v in fields.items() if v not in (None, "", False)}
        return "/?" + urlencode(params) if params else "/"


@dataclass(frozen=True, slots=True)
class ListResult:
    """One page of the list and the cursor of the next (None on the last page)."""

    rows: list[ConversationSummary]
    next_after: str | None
    matched: int


def cursor(summary: ConversationSummary) -> str:
    """A keyset cursor: the sort key of a row (most recent first, then id), stable under inserts."""
    return f"{summary.last_ts}:{summary.conversation_id}"


def _key(summary: ConversationSummary) -> tuple[int, str]:
    return (-summary.last_ts, summary.conversation_id)


def _parse_cursor(after: str) -> tuple[int, str] | None:
    ts, sep, cid = after.partition(":")
    try:
        return (-int(ts), cid) if sep else None
    except ValueError:
        return None


def run_query(summaries: Sequence[ConversationSummary], query: ListQuery) -> ListResult:
    """Filter, order (most recent first) and take the page after ``query.after``."""
    needle = query.q.casefold().strip()
    matched = [
        s
        for s in summaries
        if (not needle or needle in s.title.casefold() or needle in s.conversation_id.casefold())
        and (not query.damaged or s.damaged > 0)
    ]
    matched.sort(key=_key)
    start = 0
    if query.after:
        position = _parse_cursor(query.after)
        if position is not None:
            start = next((i for i, s in enumerate(matched) if _key(s) > position), len(matched))
    rows = matched[start : start + query.limit]
    more = start + query.limit < len(matched)
    return ListResult(rows=rows, next_after=cursor(rows[-1]) if more and rows else None, matched=len(matched))
