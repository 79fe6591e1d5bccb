"""A message on a very long line, its trace's records apart: found by msgspec, each parsed when it is needed.

A 100,000-record trace is one JSONL line of about 160 MB, and its objects parsed whole take several times
that. ``msgspec.Raw`` gives where each value begins and ends without parsing it: the message's keys and its
trace's records are spans of the line, each then parsed on its own (``core.jsonio.loads``, as a whole line
is), so memory holds the line and one record at a time.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

from core.jsonio import loads

_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ITEMS = msgspec.json.Decoder(list[msgspec.Raw])


@dataclass(frozen=True, slots=True)
class SplitMessage:
    """A message's JSON object with its trace's records left out (an empty array in their place), and the records'
    spans, unparsed."""

    shell: dict[str, Any]
    records: deque[msgspec.Raw]

    def record_texts(self) -> Iterator[bytes]:
        """Each record's JSON text, copied out of the line as it is reached; read once, each span let go as it is
        read, so the line goes with the last."""
        while self.records:
            yield bytes(memoryview(self.records.popleft()))


def split_trace(line: bytes) -> SplitMessage | None:
    """``line``'s message with its trace's records apart; None unless it is a JSON object whose
    ``intermediate_trace`` is an object holding a ``records`` array, all of it valid JSON to msgspec and to
    orjson alike (anything else is read whole, which says what is wrong with it)."""
    try:
        fields = _FIELDS.decode(line)
        trace_span = fields.get("intermediate_trace")
        trace_fields = _FIELDS.decode(trace_span) if trace_span is not None else None
        records_span = trace_fields.get("records") if trace_fields is not None else None
        if trace_fields is None or records_span is None:
            return None
        records = _ITEMS.decode(records_span)
        # Key order and values as orjson reads them: the stored text is written from these (``core.store.outline``).
        trace = {key: [] if key == "records" else loads(memoryview(span)) for key, span in trace_fields.items()}
        shell = {key: trace if key == "intermediate_trace" else loads(memoryview(span)) for key, span in fields.items()}
    except (msgspec.DecodeError, ValueError):
        return None
    return SplitMessage(shell=shell, records=deque(records))
