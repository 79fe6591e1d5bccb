"""The order of a timeline and the links across it, computed without building any card.

A conversation is flattened once into entries (message, placement, parent): each
user message's trace records sorted by ``create_ts`` (stable, so equal stamps keep
file order) and split around it, records older than the message before it, the
rest after, as the seed's ``_expand_trace_for_msg`` does. Cards are built only for
the page being rendered, so a 10,000-record trace costs one cheap pass here and
one page of cards, not 10,000 cards.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from core import Message, UserMessage
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


@dataclass(frozen=True, slots=True)
class Entry:
    """One future card: the message, where it sits, and the user message whose trace holds it."""

    message: Message
    placement: Placement
    parent: Message | None
    depth: int = 0


def flatten(messages: Iterable[Message], *, placement: Placement = "message", depth: int = 0) -> list[Entry]:
    """Messages in timeline order, each user message's trace records placed before or after it."""
    out: list[Entry] = []
    for message in messages:
        _expand(message, placement, None, depth, 0, out)
    return out


def _expand(
    message: Message, placement: Placement, parent: Message | None, depth: int, level: int, out: list[Entry]
) -> None:
    records = message.intermediate_trace.records if isinstance(message, UserMessage) else []
    if not records or level >= MAX_TRACE_DEPTH:
        out.append(Entry(message, placement, parent, depth))
        return
    ordered = sorted(records, key=lambda r: r.create_ts)
    for record in ordered:
        if record.create_ts < message.create_ts:
            _expand(record, "before", message, depth, level + 1, out)
    out.append(Entry(message, placement, parent, depth))
    for record in ordered:
        if record.create_ts >= message.create_ts:
            _expand(record, "after", message, depth, level + 1, out)


@dataclass(frozen=True, slots=True)
class Target:
    """Where a link lands: the element's id and the card (message) that holds it."""

    anchor: str
    msg_id: str


@dataclass(slots=True)
class CallIndex:
    """Tool calls and their results across a whole timeline, so links work across pages.

    A call id seen twice links to its first occurrence: ids are trace data and may repeat.
    """

    calls: dict[str, Target] = field(default_factory=dict)
    results: dict[str, Target] = field(default_factory=dict)

    @classmethod
    def of(cls, entries: Sequence[Entry]) -> CallIndex:
        index = cls()
        for entry in entries:
            msg = entry.message
            for call in msg.tool_calls or ():
                index.calls.setdefault(call.id, Target(call_anchor(msg.msg_id, call.id), msg.msg_id))
            for res in msg.tool_reses or ():
                if not isinstance(res, str):
                    index.results.setdefault(res.call_id, Target(result_anchor(msg.msg_id, res.call_id), msg.msg_id))
        return index


def call_anchor(msg_id: str, call_id: str) -> str:
    """The id of a tool call's element inside its assistant card."""
    return f"call-{slug(msg_id)}-{slug(call_id)}"


def result_anchor(msg_id: str, call_id: str) -> str:
    """The id of a tool result's element inside its tool card."""
    return f"result-{slug(msg_id)}-{slug(call_id)}"
