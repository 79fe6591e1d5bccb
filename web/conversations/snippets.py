"""Why a conversation matched a search: the first stored text that holds the search, cut around the match.

The store finds the conversations (``core.store.query``); this reads, for the few on one page of the list,
where the text matched and a window around it, cut in SQL so a 16 MB trace is never read whole. The
template escapes every part and marks the match with ``<mark>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import case, func, select

from core.store import Store
from core.store.engine import read_transaction
from core.store.tables import CONVERSATIONS, MESSAGES
from web import masking


@dataclass(frozen=True, slots=True)
class Snippet:
    """The text around a match: ``before`` + ``match`` + ``after``, and whether it was cut at either end."""

    before: str
    match: str
    after: str
    cut_before: bool
    cut_after: bool


CONTEXT_CHARS = 60
"""Characters shown on each side of the match."""
SECRET_MARGIN = 200
"""Characters read past the context, so that a secret at its edge is seen whole and masked, not shown cut."""


def snippets(store: Store, conversation_ids: Sequence[str], needle: str) -> dict[str, Snippet]:
    """The first match of ``needle`` (case-insensitive) in each conversation's stored text, by conversation id."""
    needle = needle.strip()
    if not needle or not conversation_ids or "\x00" in needle:
        return {}
    m, c = MESSAGES.c, CONVERSATIONS.c
    reach = CONTEXT_CHARS + SECRET_MARGIN
    with read_transaction(store.engine) as conn:
        find = func.strpos if conn.dialect.name == "postgresql" else func.instr
        position = find(func.lower(m.search_text), needle.lower())
        start = case((position > reach, position - reach), else_=1)
        width = len(needle) + 2 * reach
        rows = conn.execute(
            select(c.conversation_id, position, start, func.substr(m.search_text, start, width))
            .join(CONVERSATIONS, c.id == m.conversation_pk)
            .where(c.conversation_id.in_(conversation_ids), position > 0)
            .order_by(m.id)
        ).all()
    found: dict[str, Snippet] = {}
    for conversation_id, at, begin, window in rows:
        if conversation_id not in found:
            found[conversation_id] = _cut(window, at - begin, len(needle), begun=begin > 1, full=len(window) == width)
    return found


def _cut(window: str, offset: int, length: int, *, begun: bool, full: bool) -> Snippet:
    """The snippet around ``window[offset:offset + length]``, its secrets masked and none cut in half."""
    first, last = masking.cover_secrets(window, offset, offset + length)
    head = masking.safe_cut(window, max(0, first - CONTEXT_CHARS))
    tail = masking.safe_cut(window, min(len(window), last + CONTEXT_CHARS))
    return Snippet(
        before=masking.mask(window[head:first]),
        match=masking.mask(window[first:last]),
        after=masking.mask(window[last:tail]),
        cut_before=begun or head > 0,
        cut_after=full or tail < len(window),
    )
