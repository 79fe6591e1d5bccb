"""What the dialects' stream folds share: a streamed answer's events folded into the body ``read_response`` takes.

A recorded ``stream: true`` call has its answer as events (Server-Sent Events' data, or Gemini's JSON array of
chunks). Each dialect's fold (``core/providers/dialects/<x>_stream.py``) rebuilds the one answer object its
non-streamed reader reads, so a streamed call gives the messages the same call unstreamed gives. An event that
is not JSON, or a stream that stops before its end, is refused naming the event (``events[i]``): a half answer
is never read as a whole one. A stream that reports an error event is the provider's failure (StreamFailed).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from core.providers.base import JSON
from core.request_context.shapes import RequestFieldError

StreamEvents = Sequence[JSON | str]
"""A stream's events in order: each data decoded as JSON, or its text when it is not JSON (``[DONE]``)."""

# The fields a delta extends (text arriving in pieces); any other value a delta gives replaces the one before
# (the OpenAI SDK's accumulate_delta extends every string, which garbles a tag repeated per chunk: Groq's channel).
TEXT_KEYS = frozenset({"content", "refusal", "reasoning_content", "reasoning", "arguments", "name"})


class StreamFailed(RequestFieldError):
    """The stream itself says the call failed (an error event): the provider's failure, not a damaged record;
    the call's answer is reported as not captured, its ``error`` (as the stream gave it) kept."""

    def __init__(self, field: str, error: Any, where: str = "") -> None:
        self.error = error
        super().__init__(field, f"{where}the stream reports an error: {error!r:.160}")


def at(index: int) -> str:
    """The path that names an event, for RequestFieldError."""
    return f"events[{index}]"


def event_object(events: StreamEvents, index: int) -> JSON:
    """Event ``index`` as a JSON object; refused (naming it) when its data is not one."""
    event = events[index]
    if isinstance(event, str):
        raise RequestFieldError(at(index), f"the event's data is not JSON: {event[:60]!r}")
    if not isinstance(event, Mapping):
        raise RequestFieldError(at(index), "expected a JSON object")
    return event


def cut_short(events: StreamEvents, what: str) -> RequestFieldError:
    """The error for a stream that ends before ``what`` (it names the last event, where the stream stopped)."""
    last = max(len(events) - 1, 0)
    return RequestFieldError(at(last), f"the stream stops before {what}: truncated, refused rather than half read")


def failed(index: int, error: Any) -> StreamFailed:
    """The error for an event that reports the call failed."""
    return StreamFailed(f"{at(index)}.error", error)


def merge_delta(acc: dict[str, Any], delta: Mapping[str, Any]) -> None:
    """Fold one delta into ``acc``: text extends text, objects merge, lists of indexed items merge by index,
    other lists extend, anything else replaces (None never does)."""
    for key, value in delta.items():
        if value is None:
            continue
        old = acc.get(key)
        if old is None:
            acc[key] = _fresh(value)
        elif isinstance(value, str) and isinstance(old, str) and key in TEXT_KEYS:
            acc[key] = old + value
        elif isinstance(value, Mapping) and isinstance(old, dict):
            merge_delta(old, value)
        elif isinstance(value, list) and isinstance(old, list):
            _merge_list(old, value)
        elif value != "":  # an empty tag never blanks the one given before (an id sent once)
            acc[key] = _fresh(value)


def _merge_list(acc: list[Any], items: list[Any]) -> None:
    for item in items:
        index = item.get("index") if isinstance(item, Mapping) else None
        if not isinstance(index, int):
            acc.append(_fresh(item))
            continue
        same = next((a for a in acc if isinstance(a, dict) and a.get("index") == index), None)
        if same is None:
            acc.append(_fresh(item))
        else:
            merge_delta(same, item)


def _fresh(value: Any) -> Any:
    """A copy to accumulate into, with None fields of objects left out (a later delta fills them)."""
    if isinstance(value, Mapping):
        return {k: _fresh(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    return copy.deepcopy(value)
