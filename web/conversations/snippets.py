"""Why a conversation matched a search: the first stored text that holds the search, cut around the match.

The store finds the conversations and, for the few on one page of the list, the window of text around
each first match (``Store.match_windows``: cut in SQL, so a 16 MB trace is never read whole); this masks
and cuts it. The template escapes every part and marks the match with ``<mark>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.store import Store
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
    found = store.match_windows(conversation_ids, needle, CONTEXT_CHARS + SECRET_MARGIN)
    return {
        conversation_id: _cut(w.text, w.offset, w.length, begun=w.begun, full=w.full)
        for conversation_id, w in found.items()
    }


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
