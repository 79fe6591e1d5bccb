"""The conversation list's query as the URL carries it, and its translation to the store's query.

Search, filters and keyset pages run in the store (SQL, values bound, sorts and
kinds from allowlists); this module only names the URL's fields, checks them
against the same allowlists, and writes them back into links.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from core import MESSAGE_TAGS
from core.store import SORTS, ConversationQuery, InvalidQueryError
from core.store.filters import ConversationFilter

PAGE_SIZE = 50
COUNT_CAP = 200
"""The list's "save these N" counts matches up to here, so a filtered list page reads about as many rows as
it shows; past it the control says "200+", and saving still takes every match."""

_TAG_LABELS: dict[str, str] = {"user:url": "user URL", "user:history": "forwarded history"}
"""Subclass tags whose label is not the tag read aloud (``user:text`` reads "user text")."""

_ROLE_KINDS: dict[str, str] = {
    "tool": "tool result",
    "console": "console output",
    "system": "system",
    "function": "function result",
    "assistant": "damaged assistant record",
    "user": "damaged user record",
}
"""A record of a role without subclasses, or a user or assistant record that lost its subclass."""

KIND_FILTERS: dict[str, str] = {
    **{tag: _TAG_LABELS.get(tag, tag.replace(":", " ")) for tag in MESSAGE_TAGS},
    **_ROLE_KINDS,
}
"""The kinds a conversation can be filtered by (the store's ``Message.tag``), with their labels."""


SORT_LABELS: dict[str, str] = {
    "recent": "last activity",
    "newest": "newest first",
    "oldest": "oldest first",
    "damaged": "most damaged",
}


@dataclass(frozen=True, slots=True)
class ListQuery:
    """What the reader asked the list for; it round-trips through the URL (``/?q=…&damaged=1&kind=…``)."""

    q: str = ""
    damaged: bool = False
    runs: bool = False
    kind: str = ""
    sort: str = "recent"
    after: str | None = None
    limit: int = PAGE_SIZE

    def __post_init__(self) -> None:
        if self.kind and self.kind not in KIND_FILTERS:
            raise InvalidQueryError(f"unknown kind {self.kind!r}; expected one of: {', '.join(KIND_FILTERS)}")
        if self.sort not in SORTS:
            raise InvalidQueryError(f"unknown sort {self.sort!r}; expected one of: {', '.join(SORTS)}")

    @property
    def filtered(self) -> bool:
        """True when a search or a filter narrows the list."""
        return bool(self.q.strip() or self.damaged or self.runs or self.kind)

    def url(self, **changes: object) -> str:
        """This query as a ``/?...`` URL, with some fields changed (e.g. ``after`` for the next page)."""
        fields = {
            "q": self.q,
            "damaged": self.damaged,
            "runs": self.runs,
            "kind": self.kind,
            "sort": "" if self.sort == "recent" else self.sort,
            "after": self.after,
            **changes,
        }
        params = {k: ("1" if v is True else v) for k, v in fields.items() if v not in (None, "", False)}
        return "/?" + urlencode(params) if params else "/"

    @property
    def filter(self) -> ConversationFilter:
        """The search and filters of this query, as the store and a suite name them."""
        return ConversationFilter(self.q, self.kind, self.damaged, self.runs)

    @classmethod
    def of(cls, chosen: ConversationFilter) -> ListQuery:
        """The list showing what ``chosen`` matches."""
        return cls(q=chosen.search, damaged=chosen.damaged, runs=chosen.with_runs, kind=chosen.kind)

    def store_query(self) -> ConversationQuery:
        """The store's query for this page."""
        return self.filter.query(sort=self.sort, limit=self.limit, cursor=self.after or None)
