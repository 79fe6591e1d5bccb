"""The conversation list: keyset pagination, substring search and filters, all from allowlists.

Nothing from a request is ever spliced into SQL. The sort is a key of ``SORTS``
(each names a column object, not a string); every value (the search text, the
kind, the cursor's position) is a bound parameter. Search is a case-insensitive
substring match of the trimmed search text (at most ``MAX_NEEDLE`` characters) in a
conversation's id, its title (a scan of those short columns) or its messages' text,
the same on both backends. In the text: an FTS5 ``trigram`` phrase on SQLite (the text
quoted as one FTS5 string, so FTS5 syntax in it is literal), ``LIKE`` with
``%``/``_``/``\\`` escaped over folded chunks of the text under a ``pg_trgm`` index on
PostgreSQL (``core.store.pg_search``). Text shorter than three characters cannot use a
trigram index and falls back to a scan, which on SQLite folds non-ASCII letters in Python
(``traceloupe_lower``) as PostgreSQL's folded chunks and FTS5's trigrams do.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from sqlalchemy import ColumnElement, Connection, Select, exists, func, or_, select, tuple_
from sqlalchemy.sql.elements import UnaryExpression

from core.errors import UnknownNameError
from core.store.backend import backend_of
from core.store.errors import InvalidQueryError
from core.store.pg_search import MAX_NEEDLE
from core.store.tables import CONVERSATION_KINDS, CONVERSATIONS
from core.store.views import ConversationPage, ConversationSummary, from_row

SortName = Literal["recent", "oldest", "newest", "damaged"]
MAX_PAGE = 500


@dataclass(frozen=True, slots=True)
class _Sort:
    column: Any
    descending: bool


_C = CONVERSATIONS.c
SORTS: dict[str, _Sort] = {
    "recent": _Sort(_C.last_activity, descending=True),
    "oldest": _Sort(_C.first_ts, descending=False),
    "newest": _Sort(_C.first_ts, descending=True),
    "damaged": _Sort(_C.damaged, descending=True),
}
"""The allowed sorts: each is one column then the id, so a page boundary is a (value, id) pair."""


@dataclass(frozen=True, slots=True)
class ConversationQuery:
    """What the list page asks for. Every field is optional; ``sort`` must be a key of ``SORTS``."""

    search: str | None = None
    """Substring (case-insensitive) of any message's or trace record's text; trimmed; empty means no search."""
    has_damaged: bool | None = None
    has_runs: bool | None = None
    kind: str | None = None
    """Only conversations holding a message of this kind at any depth: ``user:image``, ``tool``, ``assistant``..."""
    sort: str = "recent"
    limit: int = 50
    cursor: str | None = None
    """``next_cursor`` of the previous page."""


def _summary(row: Any) -> ConversationSummary:
    return from_row(ConversationSummary, row)


SUMMARY_COLUMNS = (
    _C.id,
    _C.conversation_id,
    _C.title,
    _C.messages,
    _C.turns,
    _C.records,
    _C.damaged,
    _C.runs,
    _C.first_ts,
    _C.last_activity,
)


def summary_select() -> Select[Any]:
    """SELECT of everything a ConversationSummary needs."""
    return select(*SUMMARY_COLUMNS)


def to_summary(row: Any) -> ConversationSummary:
    """A result row of ``summary_select`` as a ConversationSummary."""
    return _summary(row)


def encode_cursor(sort: str, value: Any, pk: int) -> str:
    """An opaque cursor naming the last row of a page; it says which sort it belongs to."""
    return base64.urlsafe_b64encode(orjson.dumps([sort, value, pk])).decode().rstrip("=")


def decode_cursor(cursor: str, sort: str) -> tuple[int | None, int]:
    """The (value, id) a cursor names; InvalidQueryError for anything that is not one of ours.

    The one place a cursor from a request is read: its numbers must fit the columns they are
    compared with (a BIGINT value, an INTEGER id), or the database fails the query with an
    overflow instead of the request being refused.
    """
    try:
        data = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, binascii.Error, orjson.JSONDecodeError):
        raise InvalidQueryError("invalid cursor") from None
    ok = (
        isinstance(data, list)
        and len(data) == 3
        and data[0] == sort
        and (data[1] is None or _fits(data[1], _BIGINT))
        and _fits(data[2], _INTEGER)
    )
    if not ok:
        raise InvalidQueryError("invalid cursor (or one from another sort)")
    return data[1], data[2]


_BIGINT = 2**63
_INTEGER = 2**31
"""Bounds of the columns a cursor's numbers are compared with: sort values are BIGINT, row ids INTEGER
(32 bits on PostgreSQL)."""


def _fits(value: object, bound: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -bound <= value < bound


def search_condition(conn: Connection, needle: str) -> ColumnElement[bool]:
    """Conversations whose id or title, or a message's searchable text, contains ``needle`` (bound, literal)."""
    backend = backend_of(conn)
    matching = backend.matching_conversations(needle)
    return or_(_C.id.in_(matching), *(backend.contains(column, needle) for column in (_C.conversation_id, _C.title)))


def _narrowed(conn: Connection, stmt: Select[Any], query: ConversationQuery) -> Select[Any] | None:
    """``stmt`` with the query's search and filters; None when nothing can match."""
    needle = (query.search or "").strip()
    if needle:
        if "\x00" in needle:  # no stored text holds U+0000 (PostgreSQL cannot), so nothing matches
            return None
        if len(needle) > MAX_NEEDLE:
            raise InvalidQueryError(f"the search text is {len(needle)} characters; at most {MAX_NEEDLE} are allowed")
        stmt = stmt.where(search_condition(conn, needle))
    if query.has_damaged is not None:
        stmt = stmt.where(_C.damaged > 0 if query.has_damaged else _C.damaged == 0)
    if query.has_runs is not None:
        stmt = stmt.where(_C.runs > 0 if query.has_runs else _C.runs == 0)
    if query.kind is not None:
        k = CONVERSATION_KINDS.c
        stmt = stmt.where(exists().where(k.conversation_pk == _C.id, k.kind == query.kind))
    return stmt


def list_conversations(conn: Connection, query: ConversationQuery) -> ConversationPage:
    """One page of conversations for ``query``; raises InvalidQueryError for a sort, limit or cursor not allowed."""
    sort = SORTS.get(query.sort)
    if sort is None:
        raise InvalidQueryError(f"unknown sort {query.sort!r}; expected one of: {', '.join(SORTS)}")
    if not 1 <= query.limit <= MAX_PAGE:
        raise InvalidQueryError(f"limit must be between 1 and {MAX_PAGE}")
    stmt = _narrowed(conn, summary_select().add_columns(sort.column.label("sort_value")), query)
    if stmt is None:
        return ConversationPage(items=(), next_cursor=None)
    if query.cursor is not None:
        value, pk = decode_cursor(query.cursor, query.sort)
        boundary = tuple_(sort.column, _C.id)
        stmt = stmt.where(boundary < tuple_(value, pk) if sort.descending else boundary > tuple_(value, pk))
    order: list[UnaryExpression[Any]] = (
        [sort.column.desc(), _C.id.desc()] if sort.descending else [sort.column.asc(), _C.id.asc()]
    )
    rows = conn.execute(stmt.order_by(*order).limit(query.limit + 1)).all()
    items = tuple(_summary(r) for r in rows[: query.limit])
    more = len(rows) > query.limit
    last = rows[query.limit - 1] if more else None
    next_cursor = encode_cursor(query.sort, last.sort_value, last.id) if last is not None else None
    return ConversationPage(items=items, next_cursor=next_cursor)


def count_conversations(conn: Connection, query: ConversationQuery, cap: int) -> int:
    """How many conversations match ``query``'s search and filters, counted up to ``cap`` (its sort, limit
    and cursor are ignored): one statement, whatever the count."""
    matching = _narrowed(conn, select(_C.id), query)
    if matching is None:
        return 0
    return int(conn.execute(select(func.count()).select_from(matching.limit(cap).subquery())).scalar_one())


def conversation_pk(conn: Connection, conversation_id: str) -> int:
    """The row key of a conversation named by its id; UnknownNameError if there is none."""
    pk = conn.execute(select(_C.id).where(_C.conversation_id == conversation_id)).scalar()
    if pk is None:
        raise UnknownNameError(f"no conversation {conversation_id!r}")
    return int(pk)
