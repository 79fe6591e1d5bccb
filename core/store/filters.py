"""Which conversations: the search and filters the list asks for, a suite saves, and the store runs, in one type.

The list's URL, the suite's saved JSON and the store's query each spell it their way; this is the one place
that translates between them, and the one that puts a saved filter into words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.store.query import ConversationQuery


@dataclass(frozen=True, slots=True)
class ConversationFilter:
    """A search and the filters set; an empty or False field filters nothing (never "without")."""

    search: str = ""
    kind: str = ""
    damaged: bool = False
    with_runs: bool = False

    def query(self, *, sort: str = "recent", limit: int = 50, cursor: str | None = None) -> ConversationQuery:
        """The store's query for this filter (filters absent rather than False: False would mean "without")."""
        return ConversationQuery(
            search=self.search.strip() or None,
            has_damaged=True if self.damaged else None,
            has_runs=True if self.with_runs else None,
            kind=self.kind or None,
            sort=sort,
            limit=limit,
            cursor=cursor,
        )

    @classmethod
    def of_query(cls, query: ConversationQuery) -> ConversationFilter:
        """The filter of a store query (its sort and page aside)."""
        return cls((query.search or "").strip(), query.kind or "", query.has_damaged is True, query.has_runs is True)

    def to_json(self) -> dict[str, Any]:
        """The filter a suite is saved with: the fields that are set."""
        found = {"search": self.search.strip(), "kind": self.kind, "damaged": self.damaged, "with_runs": self.with_runs}
        return {k: v for k, v in found.items() if v}

    @classmethod
    def from_json(cls, saved: Mapping[str, Any]) -> ConversationFilter:
        """The filter a suite was saved with (``to_json``'s form)."""
        kind = saved.get("kind")
        return cls(
            str(saved.get("search") or ""),
            kind if isinstance(kind, str) else "",
            saved.get("damaged") is True,
            saved.get("with_runs") is True,
        )


SHOWN_IDS = 5
"""The ids a description of a suite chosen by id names."""


def describe(saved: Mapping[str, Any]) -> str:
    """A suite's saved filter in words (``search='x' kind='tool'``), as the suite pages and ``suite list`` show it."""
    ids = saved.get("conversations")
    if isinstance(ids, list):
        shown = ", ".join(map(str, ids[:SHOWN_IDS])) + (" ..." if len(ids) > SHOWN_IDS else "")
        return f"{len(ids)} conversation(s) chosen by id: {shown}"
    return " ".join(f"{k}={v!r}" for k, v in saved.items()) or "(no filter)"
