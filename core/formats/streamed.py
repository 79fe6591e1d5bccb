"""A streamed answer as recorded (an event stream's text, or a JSON array of chunks) folded into one answer.

The dialect folds the events (``Dialect.fold_stream``); this module splits the recorded text into them and, when
the fold refuses one, says on which line of the recorded body it is.


The event-stream format (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
lines end in CR LF, LF or CR; ``data:`` lines of one event are joined by LF; a blank line ends the event; a line
starting with ``:`` is a comment; ``event:``, ``id:`` and ``retry:`` name or steer the event. Only the data
matters here (every provider's data says its own type); each event keeps the body line it started on, so a
malformed one is reported where it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from core.jsonio import loads
from core.providers.base import JSON, Dialect
from core.providers.streamed import StreamFailed
from core.request_context.shapes import RequestFieldError

_EVENT = re.compile(r"events\[(\d+)\]")
_LINES = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One event's data, and the line of the body (from 1) its first data line is on."""

    line: int
    data: str


def looks_like_sse(text: str) -> bool:
    """Whether a body starts like an event stream (its first field a data, event, id or comment line)."""
    head = text.lstrip()[:16]
    return head.startswith(("data:", "event:", "id:", ":"))


def sse_events(text: str) -> Iterator[SseEvent]:
    """The events of an event-stream body with data, in order; a last event without its blank line counts."""
    data: list[str] = []
    start = 0
    for number, line in enumerate(_LINES.split(text), start=1):
        if not line:
            if data:
                yield SseEvent(start, "\n".join(data))
            data = []
            continue
        field, _, value = line.partition(":")
        if field == "data":
            if not data:
                start = number
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield SseEvent(start, "\n".join(data))


def fold_answer(dialect: Dialect, stream: str | list[Any]) -> JSON:
    """The one answer a recorded stream makes, by ``dialect``; RequestFieldError naming the event (its body line
    in the reason, for an event stream) when it cannot be folded."""
    if isinstance(stream, list):
        return dialect.fold_stream(stream)
    events = list(sse_events(stream))
    try:
        return dialect.fold_stream([_decoded(e.data) for e in events])
    except RequestFieldError as exc:
        found = _EVENT.match(exc.field)
        index = int(found.group(1)) if found else -1
        if not 0 <= index < len(events):
            raise
        where = f"line {events[index].line} of the streamed answer: "
        if isinstance(exc, StreamFailed):
            raise StreamFailed(exc.field, exc.error, where) from None
        raise RequestFieldError(exc.field, where + exc.reason) from None


def _decoded(data: str) -> JSON | str:
    try:
        value = loads(data)
    except ValueError:
        return data
    return value if isinstance(value, dict) else data
