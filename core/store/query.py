"""The conversation list: keyset pagination, substring search and filters, all from allowlists.

Nothing from a request is ever spliced into SQL. The sort is a key of ``SORTS``
(each names a column object, not a string); every value (the search text, the
kind, the cursor's position) is a bound parameter. Search is a case-insensitive
substring match of the trimmed search text (at most ``MAX_NEEDLE`` characters) in a
conversation's id, its title or its messages' text,
the same on both backends. In the text: an FTS5 ``trigram`` phrase on SQLite (the text
quoted as one FTS5 string, so FTS5 syntax in it is literal), ``LIKE`` with
``%``/``_``/``\\`` escaped over folded chunks of the text under a ``pg_trgm`` index on
PostgreSQL (``core.store.pg_search``; a needle of 8 characters or more through sampled 5-grams instead,
``core.store.phase_grams``); the id and title have trigram indexes too (revision 0020).
A search first walks the list in its order, testing ``WALK`` conversations one by one (a common
word fills its page there), and only then asks the indexes (a rarer one), so neither reads the
whole store. Text shorter than three characters cannot use a trigram index: past the walk it is
a scan, which on SQLite folds non-ASCII letters in Python (``traceloupe_lower``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from sqlalchemy import ColumnElement, Connection, Select, exists, func, select, tuple_
from sqlalchemy.sql.base import ReadOnlyColumnCollection
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


WALK = 200
"""Conversations a search first tests one by one, in the list's order: a common word fills its page among them
at once, where its index would read every match before the first page could be sorted. A few pages' worth: a word
found in none of them goes to the indexes, whose cost follows its matches, and a longer first walk only delays
that, each conversation tested costing several index lookups (2,000 of them read 22,000 buffers on PostgreSQL)."""
MAX_WALK = 20_000
"""The furthest a second walk goes, for a word found in the first but not often enough to fill the page."""


def search_condition(conn: Connection, needle: str) -> ColumnElement[bool]:
    """Conversations whose id or title, or a message's searchable text, contains ``needle`` (bound, literal)."""
    return _C.id.in_(backend_of(conn).matching_conversations(needle))


def _needle(query: ConversationQuery) -> str | None:
    """The query's trimmed search text; None when nothing can match it."""
    needle = (query.search or "").strip()
    if "\x00" in needle:  # no stored text holds U+0000 (PostgreSQL cannot), so nothing matches
        return None
    if len(needle) > MAX_NEEDLE:
        raise InvalidQueryError(f"the search text is {len(needle)} characters; at most {MAX_NEEDLE} are allowed")
    return needle


def _filtered(stmt: Select[Any], query: ConversationQuery) -> Select[Any]:
    """``stmt`` with the query's filters (not its search)."""
    if query.has_damaged is not None:
        stmt = stmt.where(_C.damaged > 0 if query.has_damaged else _C.damaged == 0)
    if query.has_runs is not None:
        stmt = stmt.where(_C.runs > 0 if query.has_runs else _C.runs == 0)
    if query.kind is not None:
        k = CONVERSATION_KINDS.c
        stmt = stmt.where(exists().where(k.conversation_pk == _C.id, k.kind == query.kind))
    return stmt


def _order(rows: ReadOnlyColumnCollection[str, Any], sort: _Sort | None) -> list[UnaryExpression[Any]]:
    """The list's order over ``rows`` (the conversations table's columns, or a selection of them): ``sort``'s
    column then the id; none for a count."""
    if sort is None:
        return []
    keys = (rows[sort.column.key], rows["id"])
    return [key.desc() for key in keys] if sort.descending else [key.asc() for key in keys]


def _searched(
    conn: Connection,
    stmt: Select[Any],
    needle: str,
    sort: _Sort | None,
    n: int,
    run: Callable[[Select[Any]], Sequence[Any]],
) -> Sequence[Any]:
    """``run`` of the first ``n`` rows of ``stmt`` in ``sort``'s order (any, for None) whose conversation contains
    ``needle``.

    First a walk: the next ``WALK`` conversations in order, tested one by one as they come, until ``n`` are found
    (enough for a common word). When it finds some but fewer than ``n``, a second walk as far as their share says
    ``n`` lie, up to ``MAX_WALK``; when that is not enough either, the indexes give every match, sorted (quick for a
    rare word). The cost follows the matches read, not the conversations stored.
    """
    backend = backend_of(conn)
    backend.custom_plans(conn)

    def walk(reach: int) -> Sequence[Any]:
        if backend.walks_a_subquery:
            walked = stmt.order_by(*_order(_C, sort)).limit(reach).subquery("walked")
            test = backend.conversation_contains(needle, walked)
            return run(select(walked).where(test).order_by(*_order(walked.c, sort)).limit(n))
        walked_ids = stmt.with_only_columns(_C.id).order_by(*_order(_C, sort)).limit(reach)
        test = backend.conversation_contains(needle, CONVERSATIONS)
        return run(stmt.where(_C.id.in_(walked_ids), test).order_by(*_order(_C, sort)).limit(n))

    found = walk(WALK)
    if 0 < len(found) < n:
        found = walk(min(MAX_WALK, 2 * WALK * n // len(found)))
    if len(found) == n:
        return found
    return run(stmt.where(search_condition(conn, needle)).order_by(*_order(_C, sort)).limit(n))


def list_conversations(conn: Connection, query: ConversationQuery) -> ConversationPage:
    """One page of conversations for ``query``; raises InvalidQueryError for a sort, limit or cursor not allowed."""
    sort = SORTS.get(query.sort)
    if sort is None:
        raise InvalidQueryError(f"unknown sort {query.sort!r}; expected one of: {', '.join(SORTS)}")
    if not 1 <= query.limit <= MAX_PAGE:
        raise InvalidQueryError(f"limit must be between 1 and {MAX_PAGE}")
    needle = _needle(query)
    if needle is None:
        return ConversationPage(items=(), next_cursor=None)
    stmt = _filtered(summary_select().add_columns(sort.column.label("sort_value")), query)
    if query.cursor is not None:
        value, pk = decode_cursor(query.cursor, query.sort)
        boundary = tuple_(sort.column, _C.id)
        stmt = stmt.where(boundary < tuple_(value, pk) if sort.descending else boundary > tuple_(value, pk))
    if not needle:
        rows = conn.execute(stmt.order_by(*_order(_C, sort)).limit(query.limit + 1)).all()
    else:
        rows = _searched(conn, stmt, needle, sort, query.limit + 1, lambda s: conn.execute(s).all())
    items = tuple(_summary(r) for r in rows[: query.limit])
    more = len(rows) > query.limit
    last = rows[query.limit - 1] if more else None
    next_cursor = encode_cursor(query.sort, last.sort_value, last.id) if last is not None else None
    return ConversationPage(items=items, next_cursor=next_cursor)


def count_conversations(conn: Connection, query: ConversationQuery, cap: int) -> int:
    """How many conversations match ``query``'s search and filters, counted up to ``cap`` (its sort, limit
    and cursor are ignored): the count stops at ``cap`` inside the query, whatever the number of matches."""
    needle = _needle(query)
    if needle is None:
        return 0
    stmt = _filtered(select(_C.id, _C.conversation_id, _C.title), query)  # what a walk's test reads
    if not needle:
        return _count(conn, stmt.limit(cap))
    # No order: a count needs any matches, and the indexes' way then stops at the cap instead of sorting them all.
    return len(_searched(conn, stmt, needle, None, cap, lambda s: range(_count(conn, s))))


def _count(conn: Connection, stmt: Select[Any]) -> int:
    return int(conn.execute(select(func.count()).select_from(stmt.subquery())).scalar_one())


def conversation_pk(conn: Connection, conversation_id: str) -> int:
    """The row key of a conversation named by its id; UnknownNameError if there is none."""
    pk = conn.execute(select(_C.id).where(_C.conversation_id == conversation_id)).scalar()
    if pk is None:
        raise UnknownNameError(f"no conversation {conversation_id!r}")
    return int(pk)
