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
        self._positions: dict[str, int] = {}
        for position, entry in enumerate(self._entries):
            self._positions.setdefault(msg_anchor(entry.message.msg_id), position)

    def __len__(self) -> int:
        return len(self._entries)

    def page(self, offset: int, size: int, *, through: str | None = None) -> Page:
        """Cards ``[offset, offset + size)``, extended by whole pages until the card ``through`` is included.

        ``through`` is a card's anchor (``msg-<id>``), as permalinks carry it; unknown anchors are ignored.
        """
        offset = max(0, min(offset, len(self._entries)))
        end = offset + size
        target = self._positions.get(through) if through is not None else None
        if target is not None and target >= end:
            end += (target - end) // size * size + size
        end = min(end, len(self._entries))
        cards = build_cards(self._entries[offset:end], self._calls)
        return Page(cards=cards, offset=offset, next_offset=end if end < len(self._entries) else None, total=len(self))

    def position(self, anchor: str) -> int | None:
        """Where the card with this anchor sits in the timeline (its first occurrence), or None."""
        return self._positions.get(anchor)
