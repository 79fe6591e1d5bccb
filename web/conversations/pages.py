"""The conversation list's and one conversation's page contexts: what their templates read as ``page``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from core.store import ConversationSummary
from web import urls
from web.conversations.snippets import Snippet
from web.list_query import KIND_FILTERS, SORT_LABELS, ListQuery


@dataclass(frozen=True, slots=True)
class SaveControl:
    """The list page's "save these N as a suite" form: the list's filters travel as hidden fields."""

    action: str
    count: int
    capped: bool
    fields: tuple[tuple[str, str], ...]

    @property
    def label(self) -> str:
        return f"{self.count}+" if self.capped else str(self.count)


def save_control(query: ListQuery, count: int, cap: int) -> SaveControl:
    """The control for the list's current filters (search, kind, damaged, has runs, sort)."""
    fields = {"q": query.q, "kind": query.kind, "sort": query.sort, "damaged": "1" if query.damaged else "",
              "runs": "1" if query.runs else ""}  # fmt: skip
    return SaveControl(urls.SUITES, count, count >= cap, tuple((k, v) for k, v in fields.items() if v))


@dataclass(frozen=True, slots=True)
class IndexPage:
    """``/``: the conversations matching the query, one keyset page at a time."""

    conversations: Sequence[ConversationSummary]
    query: ListQuery
    next_url: str | None
    empty_store: bool
    kinds: dict[str, str] = field(default_factory=lambda: KIND_FILTERS)
    sorts: dict[str, str] = field(default_factory=lambda: SORT_LABELS)
    snippets: Mapping[str, Snippet] = field(default_factory=dict)
    """Why each listed conversation matched the search (by conversation id)."""
    save: SaveControl | None = None
    """"Save these N as a suite", when a search or a filter narrows the list."""
    live: frozenset[str] = frozenset()
    """The listed conversations still receiving spans over OTLP."""

    def url_of(self, summary: ConversationSummary) -> str:
        return urls.conversation(summary.conversation_id)
