"""The timeline view model: core messages in, typed card contexts out, one page at a time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from core import Message
from web.timeline.build import build_cards
from web.timeline.cards import CARD_KINDS, Card, CardKind
from web.timeline.order import Entry, Order, Slot, TypedOrder, msg_anchor

__all__ = ["CARD_KINDS", "Card", "CardKind", "Order", "Page", "Slot", "Timeline", "msg_anchor"]


@dataclass(frozen=True, slots=True)
class Page:
    """A slice of a timeline's cards and where the next slice starts (None at the end)."""

    cards: list[Card]
    offset: int
    next_offset: int | None
    total: int


def _with_steps(cards: list[Card], previous: Message | None) -> list[Card]:
    """The cards with the gap between each one's stamp and the card before it (``previous`` for the first)."""
    out: list[Card] = []
    last = previous.create_ts if previous is not None else None
    for card in cards:
        out.append(replace(card, step_ms=card.create_ts - last) if last is not None else card)
        last = card.create_ts
    return out


class Timeline:
    """One conversation's cards in order; types messages and builds cards only for the page asked for.

    ``Timeline(messages)`` orders typed messages; ``Timeline(order)`` reads any :class:`Order`, such as
    ``JsonOrder`` (stored JSON, typed a page at a time). Both give the same slots and the same cards.
    """

    def __init__(self, messages: Sequence[Message] | Order) -> None:
        self._order = messages if isinstance(messages, Order) else TypedOrder(messages)
        self._slots = self._order.slots

    def __len__(self) -> int:
        return len(self._slots)

    @property
    def order(self) -> Order:
        """The order this timeline reads: its slots, its call index, its typed messages per range."""
        return self._order

    @property
    def slots(self) -> Sequence[Slot]:
        """Every future card in order (msg_id, role, placement, parent, depth), without typing any message."""
        return self._slots

    def message(self, position: int) -> Message:
        """The typed message of the card at ``position``."""
        return self._order.messages(position, position + 1)[0]

    def messages_at(self, positions: Sequence[int]) -> list[Message]:
        """The typed messages of the cards at ``positions``, in that order (read together where stored)."""
        return self._order.messages_at(positions)

    def page(self, offset: int, size: int, *, through: str | None = None, max_through: int = 1000) -> Page:
        """Cards ``[offset, offset + size)``, extended by whole pages until the card ``through`` is included.

        ``through`` is a card's anchor (``msg-<id>``), as permalinks carry it. Unknown anchors, and
        anchors more than ``max_through`` cards ahead, are ignored: one response must stay bounded, so
        a far jump opens the page that holds the card instead (:meth:`page_of`).
        """
        offset = max(0, min(offset, len(self._slots)))
        end = offset + size
        target = self.position(through) if through is not None else None
        if target is not None and end <= target < offset + max_through:
            end += (target - end) // size * size + size
        end = min(end, len(self._slots))
        # One card more than the page (the one before it): the first card's step is the gap to its stamp.
        before = offset - 1 if offset > 0 else offset
        messages = self._order.messages(before, end)
        entries = [
            Entry(message, slot.placement, slot.parent_id, slot.depth)
            for message, slot in zip(messages[offset - before :], self._slots[offset:end], strict=True)
        ]
        calls = self._order.calls_for(messages)
        cards = _with_steps(build_cards(entries, calls), messages[0] if before < offset else None)
        return Page(cards=cards, offset=offset, next_offset=end if end < len(self._slots) else None, total=len(self))

    def positions_of(self, role: str) -> list[int]:
        """Where the cards of one role sit (a kind filter): read from the slots, no message typed."""
        return [position for position, slot in enumerate(self._slots) if slot.role == role]

    def page_at(self, positions: Sequence[int], offset: int, size: int) -> Page:
        """Cards of ``positions[offset:offset + size]``: a filtered timeline, paged over its own positions."""
        offset = max(0, min(offset, len(positions)))
        chosen = positions[offset : offset + size]
        slots = [self._slots[position] for position in chosen]
        messages = self._order.messages_at(chosen)
        entries = [
            Entry(message, slot.placement, slot.parent_id, slot.depth)
            for message, slot in zip(messages, slots, strict=True)
        ]
        end = offset + len(chosen)
        cards = build_cards(entries, self._order.calls_for(messages))
        return Page(cards=cards, offset=offset, next_offset=end if end < len(positions) else None, total=len(positions))

    def page_of(self, anchor: str, size: int) -> int:
        """The offset of the page that holds the card with this anchor (0 when there is none)."""
        position = self.position(anchor)
        return 0 if position is None else position // size * size

    def position(self, anchor: str) -> int | None:
        """Where the card with this anchor sits in the timeline (its first occurrence), or None.

        A linear scan, done only when a permalink asks: building an anchor map for every request would
        make the common first page pay for a rare jump.
        """
        for position, slot in enumerate(self._slots):
            if msg_anchor(slot.msg_id) == anchor:
                return position
        return None
