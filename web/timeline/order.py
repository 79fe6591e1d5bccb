"""The order of a timeline and the links across it, computed without building any card.

A conversation is flattened once into entries (message, placement, parent), each
user message's trace records placed around it by ``core.messages.placement``. Cards are built only for
the page being rendered, so a 10,000-record trace costs one cheap pass here and
one page of cards, not 10,000 cards.

An :class:`Order` is that result as a timeline reads it: a :class:`Slot` per future
card, the call index, and the typed messages of any range. ``TypedOrder`` holds
typed messages; ``web.timeline.outline.JsonOrder`` computes the same slots from
stored JSON, and ``web.timeline.stored.StoredOrder`` from the outlines an import
stored; both type a record only when a page asks for it.
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from core import Message
from core.messages.placement import place_messages
from web.timeline.cards import Placement

MAX_TRACE_DEPTH = 16
"""Traces of trace records are expanded this deep; deeper records are still counted, never dropped silently."""

_PLAIN_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


def slug(value: str) -> str:
    """A fragment-safe token for an id from a trace: the id itself when plain, else a stable hash."""
    if _PLAIN_ID.match(value):
        return value
    return "h" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def msg_anchor(msg_id: str) -> str:
    """The permalink fragment of a card: ``msg-<id>``."""
    return f"msg-{slug(msg_id)}"


class Entry(NamedTuple):
    """One future card: the message, where it sits, and the msg_id of the user message whose trace holds it.

    A NamedTuple, not a frozen dataclass: a long trace makes one per record per request.
    """

    message: Message
    placement: Placement
    parent_id: str | None
    depth: int = 0


class Slot(NamedTuple):
    """One future card before its message is typed: what places it, finds it (``msg_id``) and filters it."""

    msg_id: str
    role: str
    placement: Placement
    parent_id: str | None
    depth: int = 0


def flatten(messages: Iterable[Message], *, placement: Placement = "message", depth: int = 0) -> list[Entry]:
    """Messages in timeline order, each user message's trace records placed before or after it."""
    return [
        Entry(message, placement if run.side == "top" else run.side, run.parent, depth)
        for run in place_messages(messages, max_depth=MAX_TRACE_DEPTH)
        for message in run.nodes
    ]


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


class _HasCallId(Protocol):
    @property
    def call_id(self) -> str: ...


class LinkedRecord(Protocol):
    """What the call index reads of a record: its id, its tool calls' ids and its results' call ids."""

    @property
    def msg_id(self) -> str: ...

    @property
    def tool_calls(self) -> Sequence[_HasId] | None: ...

    @property
    def tool_reses(self) -> Sequence[_HasCallId | str] | None: ...


@dataclass(frozen=True, slots=True)
class Target:
    """Where a link lands: the element's id and the anchor of the card that holds it."""

    anchor: str
    card: str


@dataclass(slots=True)
class CallIndex:
    """Which message holds each tool call and each tool result, across a whole timeline.

    Only ids are collected here (one pass, no string building), so a 10,000-record
    trace stays cheap; anchors are made for the few links a page actually shows.
    A call id seen twice links to its first occurrence: ids are trace data and may repeat.
    """

    calls: dict[str, str] = field(default_factory=dict)
    results: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, entries: Sequence[Entry]) -> CallIndex:
        """The index of typed entries, in timeline order."""
        return cls.of_records(entry.message for entry in entries)

    @classmethod
    def of_records(cls, records: Iterable[LinkedRecord]) -> CallIndex:
        """The index of records in timeline order (typed messages, or outlines read from stored JSON)."""
        return cls.of_ids(
            (
                msg.msg_id,
                [call.id for call in msg.tool_calls] if msg.tool_calls else None,
                [res.call_id for res in msg.tool_reses if not isinstance(res, str)] if msg.tool_reses else None,
            )
            for msg in records
        )

    @classmethod
    def of_ids(cls, records: Iterable[tuple[str, Sequence[str] | None, Sequence[str] | None]]) -> CallIndex:
        """The index of ``(msg_id, tool call ids, result call ids)`` in timeline order."""
        index = cls()
        calls = index.calls
        results = index.results
        for msg_id, call_ids, result_ids in records:
            if call_ids:
                for call_id in call_ids:
                    calls.setdefault(call_id, msg_id)
            if result_ids:
                for call_id in result_ids:
                    results.setdefault(call_id, msg_id)
        return index

    def call_of(self, call_id: str) -> Target | None:
        """Where the call with this id is, if the timeline has it."""
        msg_id = self.calls.get(call_id)
        return None if msg_id is None else Target(call_anchor(msg_id, call_id), msg_anchor(msg_id))

    def result_of(self, call_id: str) -> Target | None:
        """Where the result for this call id is, if the timeline has it."""
        msg_id = self.results.get(call_id)
        return None if msg_id is None else Target(result_anchor(msg_id, call_id), msg_anchor(msg_id))


class Order(ABC):
    """A timeline's order: one slot per future card, the call index, and the typed messages of any range.

    A subclass sets ``_slots`` and ``_calls`` when it is made and says how messages are typed.
    """

    _slots: Sequence[Slot]
    _calls: CallIndex

    @property
    def slots(self) -> Sequence[Slot]:
        """Every future card in order, without typing any message."""
        return self._slots

    @property
    def calls(self) -> CallIndex:
        """Where each tool call and tool result is, across the whole timeline."""
        return self._calls

    @abstractmethod
    def messages(self, start: int, end: int) -> list[Message]:
        """The typed messages of slots ``[start, end)``."""

    def messages_at(self, positions: Sequence[int]) -> list[Message]:
        """The typed messages of the slots at ``positions`` (an order that reads storage reads them at once)."""
        return [self.messages(position, position + 1)[0] for position in positions]

    def calls_for(self, messages: Sequence[Message]) -> CallIndex:
        """A call index that holds at least the links of these messages' tool calls and results (an order that
        reads its index from storage reads only those)."""
        return self.calls

    def turns(self) -> list[str]:
        """The msg_ids of the turns, in order: top-level user cards whose trace records follow or precede them."""
        slots = self.slots
        users = [s.msg_id for s in slots if s.role == "user" and s.placement == "message" and s.depth == 0]
        parents = {s.parent_id for s in slots if s.parent_id is not None}
        return [u for u in users if u in parents]


class TypedOrder(Order):
    """The order of messages already typed."""

    def __init__(self, messages: Iterable[Message]) -> None:
        self._entries = flatten(messages)
        self._slots = [Slot(e.message.msg_id, e.message.role, e.placement, e.parent_id, e.depth) for e in self._entries]
        self._calls = CallIndex.of(self._entries)

    def messages(self, start: int, end: int) -> list[Message]:
        return [entry.message for entry in self._entries[start:end]]


def call_anchor(msg_id: str, call_id: str) -> str:
    """The id of a tool call's element inside its assistant card."""
    return f"call-{slug(msg_id)}-{slug(call_id)}"


def result_anchor(msg_id: str, call_id: str) -> str:
    """The id of a tool result's element inside its tool card."""
    return f"result-{slug(msg_id)}-{slug(call_id)}"
