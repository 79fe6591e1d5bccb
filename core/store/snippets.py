"""Where a search matched: for a few conversations, the window of stored text around each first match.

The store finds the conversations (``core.store.query``); this reads, for the few on one page of the list,
where the text matched and a window around it, cut in SQL so a 16 MB trace is never read whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Engine

from core.store.backend import backend_of
from core.store.engine import read_transaction


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
    statement = backend_of(engine).match_windows(conversation_ids, needle, reach, width)
    with read_transaction(engine) as conn:
        rows = conn.execute(statement).all()
    found: dict[str, MatchWindow] = {}
    for conversation_id, at, begin, window in rows:
        if conversation_id not in found:
            found[conversation_id] = MatchWindow(window, at - begin, len(needle), begin > 1, len(window) == width)
    return found
