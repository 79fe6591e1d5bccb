"""Where a search matched: for a few conversations, the window of stored text around each first match.

The store finds the conversations (``core.store.query``); this reads, for the few on one page of the list,
where the text matched and a window around it, cut in SQL so a 16 MB trace is never read whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, Select, case, func, select
from sqlalchemy.dialects.postgresql import distinct_on

from core.store.engine import LOWER_FUNCTION, read_transaction
from core.store.pg_search import SEARCH_CHUNKS, STRIDE, fold
from core.store.tables import CONVERSATIONS, MESSAGES


@dataclass(frozen=True, slots=True)
class MatchWindow:
    """The stored text around a match: the match is ``text[offset:offset + length]``."""

    text: str
    offset: int
    length: int
    begun: bool
    """True when the window starts after the text's start."""
    full: bool
    """True when the window is as wide as asked (the text may go on past it)."""


def match_windows(engine: Engine, conversation_ids: Sequence[str], needle: str, reach: int) -> dict[str, MatchWindow]:
    """The first match of ``needle`` (case-insensitive, trimmed) in each conversation's stored text with ``reach``
    characters on each side, by conversation id."""
    needle = needle.strip()
    if not needle or not conversation_ids or "\x00" in needle:
        return {}
    width = len(needle) + 2 * reach
    with read_transaction(engine) as conn:
        statement = _pg_matches if conn.dialect.name == "postgresql" else _sqlite_matches
        rows = conn.execute(statement(conversation_ids, needle, reach, width)).all()
    found: dict[str, MatchWindow] = {}
    for conversation_id, at, begin, window in rows:
        if conversation_id not in found:
            found[conversation_id] = MatchWindow(window, at - begin, len(needle), begin > 1, len(window) == width)
    return found


def _window(position: Any, text: Any, reach: int, width: int) -> tuple[Any, Any]:
    """The start (1-based) and the text of the ``width`` characters from ``reach`` before ``position`` in ``text``."""
    start = case((position > reach, position - reach), else_=1)
    return start, func.substr(text, start, width)


def _sqlite_matches(conversation_ids: Sequence[str], needle: str, reach: int, width: int) -> Select[Any]:
    """(conversation id, position, window start, window) of every stored text that holds ``needle``."""
    m, c = MESSAGES.c, CONVERSATIONS.c
    position = func.instr(getattr(func, LOWER_FUNCTION)(m.search_text), needle.lower())  # SQLite's lower(): ASCII only
    start, window = _window(position, m.search_text, reach, width)
    return (
        select(c.conversation_id, position, start, window)
        .join(CONVERSATIONS, c.id == m.conversation_pk)
        .where(c.conversation_id.in_(conversation_ids), position > 0)
        .order_by(m.id)
    )


def _pg_matches(conversation_ids: Sequence[str], needle: str, reach: int, width: int) -> Select[Any]:
    """As ``_sqlite_matches``, one row per conversation: its first matching chunk (``core.store.pg_search``),
    whose place in the text the fold keeps, and the window read from the text itself."""
    s, m, c = SEARCH_CHUNKS.c, MESSAGES.c, CONVERSATIONS.c
    wanted = select(c.id).where(c.conversation_id.in_(conversation_ids))
    offset = func.strpos(s.folded, fold(needle))  # not LIKE: the trigram index would read every match in the store
    first = (
        select(s.conversation_pk, s.message_pk, (s.seq * STRIDE + offset).label("at"))
        .where(s.conversation_pk.in_(wanted), offset > 0)
        .order_by(s.conversation_pk, s.message_pk, s.seq)
        .ext(distinct_on(s.conversation_pk))
        .subquery()
    )
    start, window = _window(first.c.at, m.search_text, reach, width)
    return (
        select(c.conversation_id, first.c.at, start, window)
        .select_from(first)
        .join(MESSAGES, m.id == first.c.message_pk)
        .join(CONVERSATIONS, c.id == first.c.conversation_pk)
        .order_by(first.c.message_pk)
    )
