"""The timeline view model: core messages in, typed card contexts out, one page at a time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core import Message
from web.timeline.build import build_cards
from web.timeline.cards import CARD_KINDS, Card, CardKind
from web.timeline.order import CallIndex, Entry, flatten, msg_anchor

__all__ = ["CARD_KINDS", "Card", "CardKind", "Page", "Timeline", "msg_anchor"]


@dataclass(frozen=True, slots=True)
class Page:
    """A slice of a timeline's cards and where the next slice starts (None at the end)."""

    cards: list[Card]
    offset: int
    next_offset: int | None
    total: int


class Timeline:
    """One conversation's cards in order; builds cards only for the page asked for."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self._entries: list[Entry] = flatten(messages)
        self._calls = CallIndex.of(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def entries(self) -> Sequence[Entry]:
        """Every future card in order (message, placement, parent), without building any card."""
        return self._entries

    def page(self, offset: int, size: int, *, through: str | None = None, max_through: int = 1000) -> Page:
        """Cards ``[offset, offset + size)``, extended by whole pages until the card ``through`` is included.

        ``through`` is a card's anchor (``msg-<id>``), as permalinks carry it. Unknown anchors, and
        anchors more than ``max_through`` cards ahead, are ignored: one response must stay bounded, so
        a far jump opens the page that holds the card instead (:meth:`page_of`).
        """
        offset = max(0, min(offset, len(self._entries)))
        end = offset + size
        target = self.position(through) if through is not None else None
        if target is not None and end <= target < offset + max_through:
            end += (target - end) // size * size + size
        end = min(end, len(self._entries))
        cards = build_cards(self._entries[offset:end], self._calls)
        return Page(cards=cards, offset=offset, next_offset=end if end < len(self._entries) else None, total=len(self))

    def page_of(self, anchor: str, size: int) -> int:
        """The offset of the page that holds the card with this anchor (0 when there is none)."""
        position = self.position(anchor)
        return 0 if position is None else position // size * size

    def position(self, anchor: str) -> int | None:
        """Where the card with this anchor sits in the timeline (its first occurrence), or None.

        A linear scan, done only when a permalink asks: building an anchor map for every request would
        make the common first page pay for a rare jump.
        """
        for position, entry in enumerate(self._entries):
            if msg_anchor(entry.message.msg_id) == anchor:
                return position
        return None
