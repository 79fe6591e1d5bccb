"""Moving around a long timeline: the next card that is damaged, an error or a divergence, found from a card on.

A seek types records a chunk at a time from where the reader is, and stops at the first match, so
the page that holds it is the only page the browser then loads (``?at=``). Typed records stay in
the order's cache, so pressing "next" again starts where the last search stopped paying.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Literal, assert_never, get_args

from core import Message
from core.integrity import is_damaged
from web.timeline import Timeline
from web.timeline.order import msg_anchor

SeekTarget = Literal["damaged", "error", "divergence"]
SEEK_TARGETS: tuple[SeekTarget, ...] = get_args(SeekTarget)
SEEK_LABELS: dict[SeekTarget, str] = {
    "damaged": "damaged record",
    "error": "error",
    "divergence": "divergence",
}
SEEK_TITLES: dict[SeekTarget, str] = {
    "damaged": "The next record that lost its type on a JSON round trip (TFROB-299)",
    "error": "The next tool result marked is_error",
    "divergence": "The next reply that a replay regenerated differently (text or tool calls)",
}

ROLE_FILTERS: dict[str, str] = {
    "user": "user messages",
    "assistant": "assistant replies",
    "tool": "tool results",
    "console": "console output",
    "system": "system",
    "function": "function results",
}
"""The timeline's kind filter: by role, which every slot knows without typing its message."""

SCAN_CHUNK = 200
"""Records typed per read while seeking: one read per chunk, and a near match costs one chunk."""


def is_error(message: Message) -> bool:
    """A tool message with a result marked ``is_error``."""
    return any(not isinstance(res, str) and res.is_error for res in message.tool_reses or ())


def next_position(
    timeline: Timeline, target: SeekTarget, after: int | None, diverged: Collection[str] = ()
) -> int | None:
    """The position of the first card past ``after`` (from the start when None) that matches ``target``.

    ``diverged`` holds the msg_ids of replies a replay regenerated differently.
    """
    start = 0 if after is None else after + 1
    match target:
        case "divergence":
            slots = timeline.slots
            return next((p for p in range(start, len(slots)) if slots[p].msg_id in diverged), None)
        case "damaged":
            return _scan(timeline, start, is_damaged)
        case "error":
            return _scan(timeline, start, is_error)
        case _:
            assert_never(target)


def _scan(timeline: Timeline, start: int, test: Callable[[Message], bool]) -> int | None:
    for chunk in range(start, len(timeline), SCAN_CHUNK):
        end = min(chunk + SCAN_CHUNK, len(timeline))
        for offset, message in enumerate(timeline.order.messages(chunk, end)):
            if test(message):
                return chunk + offset
    return None


def anchor_at(timeline: Timeline, position: int) -> str:
    """The anchor of the card at ``position``."""
    return msg_anchor(timeline.slots[position].msg_id)
