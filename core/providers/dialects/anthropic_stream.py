"""A streamed Messages answer folded into the ``message`` its reader takes.

The stream (https://docs.anthropic.com/en/api/messages-streaming): ``message_start`` carries the message with
empty content; each block opens with ``content_block_start``, grows by ``content_block_delta`` (``text_delta``,
``input_json_delta`` fragments of a tool input's JSON, ``thinking_delta``, ``signature_delta``,
``citations_delta``) and closes with ``content_block_stop``; ``message_delta`` gives the stop reason and the
final usage; ``message_stop`` ends it. ``ping`` events carry nothing; an ``error`` event is a failed answer.
"""

from __future__ import annotations

from typing import Any

import orjson

from core.providers.base import JSON
from core.providers.reading import as_object
from core.providers.streamed import StreamEvents, at, cut_short, event_object, failed
from core.request_context.shapes import RequestFieldError

# Each delta type: the block field its text extends (citations_delta appends to a list instead).
DELTA_FIELDS = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "signature",
    "input_json_delta": "partial_json",
    "compaction_delta": "content",  # a compaction block's summary (context management; pydantic-ai's cassettes)
}
IGNORED = frozenset({"ping"})


def fold(events: StreamEvents) -> JSON:
    """The ``message`` the events make; refused when ``message_stop`` never comes or an ``error`` event does."""
    message: JSON | None = None
    blocks: dict[int, dict[str, Any]] = {}
    for i in range(len(events)):
        event = event_object(events, i)
        kind = event.get("type")
        if kind in IGNORED:
            continue
        if kind == "error":
            raise failed(i, event.get("error"))
        if kind == "message_start":
            message = dict(as_object(event.get("message"), f"{at(i)}.message"))
            message["content"] = list(message.get("content") or [])
            continue
        if message is None:
            raise RequestFieldError(f"{at(i)}.type", f"{kind!r} before message_start")
        if kind == "content_block_start":
            blocks[_index(event, i)] = dict(as_object(event.get("content_block"), f"{at(i)}.content_block"))
        elif kind == "content_block_delta":
            _extend(blocks, event, i)
        elif kind == "content_block_stop":
            _close(blocks, event, i)
        elif kind == "message_delta":
            delta = as_object(event.get("delta") or {}, f"{at(i)}.delta")
            message.update({k: v for k, v in delta.items() if v is not None})
            usage = event.get("usage")
            if isinstance(usage, dict):
                message["usage"] = {**(message.get("usage") or {}), **{k: v for k, v in usage.items() if v is not None}}
        elif kind == "message_stop":
            if i != len(events) - 1:
                raise RequestFieldError(at(i + 1), "an event after message_stop")
            message["content"] += [blocks[k] for k in sorted(blocks)]
            return message
        else:
            raise RequestFieldError(f"{at(i)}.type", f"unknown stream event {kind!r}")
    raise cut_short(events, "message_stop")


def _index(event: JSON, i: int) -> int:
    index = event.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        raise RequestFieldError(f"{at(i)}.index", "expected a whole number")
    return index


def _block(blocks: dict[int, dict[str, Any]], event: JSON, i: int) -> dict[str, Any]:
    block = blocks.get(_index(event, i))
    if block is None:
        raise RequestFieldError(f"{at(i)}.index", "a delta for a block that was not started")
    return block


def _extend(blocks: dict[int, dict[str, Any]], event: JSON, i: int) -> None:
    block = _block(blocks, event, i)
    delta = as_object(event.get("delta"), f"{at(i)}.delta")
    kind = delta.get("type")
    if kind == "citations_delta":
        block.setdefault("citations", []).append(delta.get("citation"))
        return
    field = DELTA_FIELDS.get(kind) if isinstance(kind, str) else None
    if field is None:
        raise RequestFieldError(f"{at(i)}.delta.type", f"unknown delta {kind!r}")
    fragment = delta.get(field)
    if not isinstance(fragment, str):
        raise RequestFieldError(f"{at(i)}.delta.{field}", "expected a string")
    block[field] = (block.get(field) or "") + fragment


def _close(blocks: dict[int, dict[str, Any]], event: JSON, i: int) -> None:
    """A tool input streamed as JSON fragments is parsed whole once its block stops."""
    block = _block(blocks, event, i)
    fragments = block.pop("partial_json", None)
    if fragments is None or not fragments.strip():
        return  # no fragment (or only empty ones): the input the block started with ({} for no argument)
    try:
        block["input"] = orjson.loads(fragments)
    except orjson.JSONDecodeError as exc:
        raise RequestFieldError(at(i), f"the tool input's streamed JSON does not parse: {exc}") from None
