"""A streamed Responses answer folded into the ``response`` its reader takes.

The stream (https://platform.openai.com/docs/api-reference/responses-streaming) ends with ``response.completed``
(or ``response.incomplete`` / ``response.failed``), which carries the whole response: that object is the answer.
Where its ``output`` is empty (a compatible server that sends only the status), the output is rebuilt from the
events: each ``response.output_item.done`` item whole, else the item added by ``response.output_item.added``
grown by its deltas (``response.output_text.delta``, ``response.function_call_arguments.delta``,
``response.reasoning_summary_text.delta``).
"""

from __future__ import annotations

from typing import Any

from core.providers.base import JSON
from core.providers.reading import as_object
from core.providers.streamed import StreamEvents, at, cut_short, event_object, failed
from core.request_context.shapes import RequestFieldError

FINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
TRAILER = "[DONE]"
"""Chat's end mark, which OpenRouter's Responses endpoint also sends after the final event."""
# A delta event's type, the item field it grows, and whether that field is inside an indexed list of parts.
DELTAS: dict[str, tuple[str, str | None]] = {
    "response.output_text.delta": ("text", "content"),
    "response.refusal.delta": ("refusal", "content"),
    "response.reasoning_summary_text.delta": ("text", "summary"),
    "response.reasoning_text.delta": ("text", "content"),
    "response.function_call_arguments.delta": ("arguments", None),
    "response.custom_tool_call_input.delta": ("input", None),
}
# Where a delta's part index is, per list.
PART_INDEX = {"content": "content_index", "summary": "summary_index"}
# The kind of part a list holds, when a delta arrives before its part was announced.
PART_TYPES = {
    "response.output_text.delta": "output_text",
    "response.refusal.delta": "refusal",
    "response.reasoning_summary_text.delta": "summary_text",
    "response.reasoning_text.delta": "reasoning_text",
}


def fold(events: StreamEvents) -> JSON:
    """The response the events end with (its output rebuilt from the events when it carries none); refused
    when no final event (``response.completed`` and its kin) comes."""
    items: dict[int, dict[str, Any]] = {}
    for i in range(len(events)):
        event = event_object(events, i)
        kind = event.get("type")
        if kind == "error":
            raise failed(i, event)
        if kind in FINAL:
            trailing = [j for j in range(i + 1, len(events)) if events[j] != TRAILER]
            if trailing:
                raise RequestFieldError(at(trailing[0]), f"an event after {kind}")
            response = dict(as_object(event.get("response"), f"{at(i)}.response"))
            if not response.get("output"):
                response["output"] = [items[k] for k in sorted(items)]
            return response
        if kind in ("response.output_item.added", "response.output_item.done"):
            items[_whole(event, "output_index", i)] = dict(as_object(event.get("item"), f"{at(i)}.item"))
        elif isinstance(kind, str) and kind in DELTAS:
            _grow(items, event, kind, i)
    raise cut_short(events, "response.completed")


def _whole(event: JSON, key: str, i: int) -> int:
    value = event.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RequestFieldError(f"{at(i)}.{key}", "expected a whole number")
    return value


def _grow(items: dict[int, dict[str, Any]], event: JSON, kind: str, i: int) -> None:
    """Append a delta to its item's field (an item finished by output_item.done is whole already)."""
    field, parts_key = DELTAS[kind]
    item = items.get(_whole(event, "output_index", i))
    if item is None:
        raise RequestFieldError(f"{at(i)}.output_index", "a delta for an item that was not added")
    delta = event.get("delta")
    if not isinstance(delta, str):
        raise RequestFieldError(f"{at(i)}.delta", "expected a string")
    target: dict[str, Any] = item
    if parts_key is not None:
        parts = item.setdefault(parts_key, [])
        index = _whole(event, PART_INDEX[parts_key], i)
        while len(parts) <= index:
            parts.append({"type": PART_TYPES[kind], field: ""})
        target = parts[index]
    target[field] = (target.get(field) or "") + delta
