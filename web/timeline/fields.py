"""One field of one record, whole: what a card's "show all" asks for when its text was clipped or collapsed.

The card builder is the only place that knows how a record becomes card text (tool arguments
pretty-printed, parts joined, ...). So the whole value is the same card built again without the
clip (:func:`web.timeline.build.whole_fields`), and the field is found by the JSON pointer the
clipped text carries (:class:`web.timeline.cards.FieldText`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

from core import HistoryMessage, Message, UserMessage
from web.source import Loaded
from web.timeline.build import build_card, whole_fields
from web.timeline.cards import Card, FieldText
from web.timeline.order import CallIndex, Entry, msg_anchor

COLLAPSE_LINES = 20
"""A text longer than this many lines is shown collapsed, with "show all"."""

COLLAPSE_CHARS = 2_400
"""Or longer than this many characters (a few wrapped lines can be as tall as twenty short ones)."""


def collapses(text: str) -> bool:
    """Whether a card shows ``text`` collapsed."""
    return len(text) > COLLAPSE_CHARS or text.count("\n", 0, COLLAPSE_CHARS) >= COLLAPSE_LINES


def records(messages: Iterable[Message]) -> Iterator[Message]:
    """Every message and record at any depth: trace records and forwarded histories included."""
    stack = list(messages)[::-1]
    while stack:
        message = stack.pop()
        yield message
        nested: list[Message] = []
        if isinstance(message, UserMessage):
            nested.extend(message.intermediate_trace.records)
        if isinstance(message, HistoryMessage):
            nested.extend(message.content)
        stack.extend(reversed(nested))


def find_record(loaded: Loaded, msg_id: str) -> Message | None:
    """The record ``msg_id`` of a conversation: typed alone when the timeline holds it, else searched for."""
    position = loaded.timeline.position(msg_anchor(msg_id))
    if position is not None:
        message = loaded.timeline.message(position)
        if message.msg_id == msg_id:
            return message
    # A message inside a forwarded history has no slot of its own: search the typed conversation.
    return next((m for m in records(loaded.messages) if m.msg_id == msg_id), None)


def field_text(record: Message, field: str) -> str | None:
    """The whole text of the card field ``field`` of ``record`` (None when its card has no such field)."""
    with whole_fields():
        card = build_card(Entry(record, "message", None), CallIndex.of([]))
    return _find(card.body, field) or _find_meta(card, field)


def _find_meta(card: Card, field: str) -> str | None:
    for text in (card.metadata, *card.extra):
        if isinstance(text, FieldText) and text.field == field:
            return str(text)
    return None


def _find(value: Any, field: str) -> str | None:
    if isinstance(value, FieldText):
        return str(value) if value.field == field else None
    if isinstance(value, Card):  # a nested card is another record's
        return None
    if isinstance(value, tuple):
        return next((found for item in value if (found := _find(item, field)) is not None), None)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            found = _find(getattr(value, f.name), field)
            if found is not None:
                return found
    return None
