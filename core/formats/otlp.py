"""OTLP trace files read as spans, one resource-spans batch at a time: OTLP/JSON and OTLP/protobuf.

Three containers of ``ExportTraceServiceRequest``: one JSON document (``{"resourceSpans": [...]}``), JSON
lines of them (what the collector's file exporter writes), and the protobuf encoding. Memory holds one
``ResourceSpans`` batch however large the file: JSON is cut at the batch boundaries by a scanner that only
tracks brackets and strings, protobuf by reading the request's repeated field 1 one entry at a time.

OTLP/JSON ids are hex, not base64 (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): a
generic protobuf JSON parser reads them as base64 without an error. Both spellings are read here (a hex id
as it is, a base64 one as the hex of its bytes), and protobuf's bytes are written as hex.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

import orjson

from core.errors import InputError

CHUNK = 1 << 20
"""Bytes read at a time while looking for the end of a batch."""
LINE_LIMIT = 64 << 20
"""The longest JSON line read whole; a longer one (a whole export on one line) is cut by the scanner."""

_HEX_ID = re.compile(rb"[0-9a-fA-F]{16}|[0-9a-fA-F]{32}")
_LOWER_HEX_ID = re.compile(r"[0-9a-f]{16}|[0-9a-f]{32}")
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]|"')
_BATCH_KEYS = (b'"resourceSpans"', b'"resource_spans"')


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """A span event: its name, time and attributes."""

    name: str
    time: datetime | None
    attributes: dict[str, Any]


@dataclass(slots=True)
class Span:
    """One span with its attributes read into Python values, and its resource's attributes beside it."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: datetime | None
    end: datetime | None
    attributes: dict[str, Any]
    events: list[SpanEvent] = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str = ""
    is_error: bool = False
    line: int | None = None
    dropped_attributes: int = 0
    """Attributes the SDK dropped past its limit (``droppedAttributesCount``): the oldest messages of a history."""
    dropped_events: int = 0


def dropped_reason(span: Span) -> str | None:
    """What a span that reports dropped attributes or events lost, said for the conversation; None when nothing."""
    lost = [
        f"{n} {what}{'s' * (n != 1)}"
        for n, what in ((span.dropped_attributes, "attribute"), (span.dropped_events, "event"))
        if n > 0
    ]
    if not lost:
        return None
    return f"span {span.span_id} dropped {' and '.join(lost)} past its SDK's limit: messages may be missing"


def hex_id(value: Any) -> str:
    """A trace or span id as lowercase hex, from OTLP/JSON's hex or a protobuf JSON's base64."""
    if isinstance(value, bytes):
        return value.hex()
    if not isinstance(value, str) or not value:
        return ""
    if _LOWER_HEX_ID.fullmatch(value):  # as OTLP/JSON writes them
        return value
    raw = value.encode()
    if _HEX_ID.fullmatch(raw):
        return value.lower()
    try:
        decoded = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        return value
    return decoded.hex() if len(decoded) in (8, 16) else value


def _time(value: Any) -> datetime | None:
    try:
        nanos = int(value)
    except (TypeError, ValueError):
        return None
    return datetime.fromtimestamp(nanos / 1e9, tz=UTC) if nanos > 0 else None


_SCALAR_VALUES = frozenset(("stringValue", "string_value", "boolValue", "bool_value", "doubleValue", "double_value"))


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` (JSON, camelCase or snake_case) as a Python value."""
    if not isinstance(value, dict):
        return value
    for key, item in value.items():
        if key in _SCALAR_VALUES:
            return item
        if key in ("intValue", "int_value"):
            try:
                return int(item)
            except (TypeError, ValueError):
                return item
        if key in ("arrayValue", "array_value"):
            return [any_value(v) for v in (item or {}).get("values", [])]
        if key in ("kvlistValue", "kvlist_value"):
            return attributes((item or {}).get("values", []))
        if key in ("bytesValue", "bytes_value"):
            return item
    return None


def attributes(items: Any) -> dict[str, Any]:
    """A ``KeyValue`` list as a dict."""
    if not isinstance(items, list):
        return {}
    return {kv["key"]: any_value(kv.get("value")) for kv in items if isinstance(kv, dict) and "key" in kv}


def _get(obj: dict[str, Any], camel: str, snake: str) -> Any:
    return obj.get(camel, obj.get(snake))


def _count(value: Any) -> int:
    """A ``uint32`` count as OTLP/JSON writes it (a number, or a string from some encoders); 0 when unreadable."""
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def spans_of_batch(batch: Any, line: int | None, keep: Callable[[], bool] | None = None) -> Iterator[Span]:
    """The spans of one ``ResourceSpans`` (as JSON), each with its resource's attributes; with ``keep``, only those
    it answers True for (asked once per span, in order, so it can count positions)."""
    if not isinstance(batch, dict):
        return
    resource = attributes((batch.get("resource") or {}).get("attributes"))
    for scope_spans in _get(batch, "scopeSpans", "scope_spans") or _get(batch, "instrumentationLibrarySpans", "") or []:
        scope = (scope_spans.get("scope") or scope_spans.get("instrumentationLibrary") or {}).get("name", "")
        for span in scope_spans.get("spans") or []:
            if keep is not None and not keep():
                continue
            status = span.get("status") or {}
            code = status.get("code")
            yield Span(
                trace_id=hex_id(_get(span, "traceId", "trace_id")),
                span_id=hex_id(_get(span, "spanId", "span_id")),
                parent_id=hex_id(_get(span, "parentSpanId", "parent_span_id")) or None,
                name=str(span.get("name", "")),
                start=_time(_get(span, "startTimeUnixNano", "start_time_unix_nano")),
                end=_time(_get(span, "endTimeUnixNano", "end_time_unix_nano")),
                attributes=attributes(span.get("attributes")),
                events=[
                    SpanEvent(
                        str(e.get("name", "")),
                        _time(_get(e, "timeUnixNano", "time_unix_nano")),
                        attributes(e.get("attributes")),
                    )
                    for e in span.get("events") or []
                    if isinstance(e, dict)
                ],
                resource=resource,
                scope=str(scope),
                is_error=code in (2, "STATUS_CODE_ERROR"),
                line=line,
                dropped_attributes=_count(_get(span, "droppedAttributesCount", "dropped_attributes_count")),
                dropped_events=_count(_get(span, "droppedEventsCount", "dropped_events_count")),
            )


def _json_batches(stream: Any, source: str) -> Iterator[tuple[Any, int | None]]:
    """Each ``ResourceSpans`` of one JSON document, cut out of the stream without reading the rest."""
    buffer = b""
    pos = depth = 0
    start = -1  # where the batch being read begins in ``buffer``
    in_batches = pending_key = eof = False
    lines_before = 1  # the line ``buffer[0]`` is on
    while True:
        match = _TOKEN.search(buffer, pos)
        if match is None or match.group() == b'"':  # scanned all, or a string runs past what is read
            if eof:
                if match is None:
                    break
                raise InputError("OTLP/JSON ends inside a string", source=source)
            pos = len(buffer) if match is None else match.start()
            keep = start if start >= 0 else pos
            lines_before += buffer.count(b"\n", 0, keep)
            buffer, pos, start = buffer[keep:], pos - keep, (0 if start >= 0 else -1)
            more = stream.read(CHUNK)
            eof = not more
            buffer += more
            continue
        token = match.group()
        pos = match.end()
        first = token[:1]
        if first == b'"':
            pending_key = depth == 1 and token in _BATCH_KEYS
            continue
        if first in (b"[", b"{"):
            depth += 1
            if pending_key and first == b"[" and depth == 2:
                in_batches = True
            elif in_batches and depth == 3 and first == b"{":
                start = match.start()
            pending_key = False
            continue
        depth -= 1
        if in_batches and depth == 2 and start >= 0:
            line = lines_before + buffer.count(b"\n", 0, start)
            yield orjson.loads(buffer[start:pos]), line
            start = -1
        elif in_batches and depth == 1:
            in_batches = False
    if depth != 0:
        raise InputError("OTLP/JSON document ends before its brackets close", source=source)


def _read_varint(stream: IO[bytes]) -> int | None:
    shift = result = 0
    while True:
        byte = stream.read(1)
        if not byte:
            return None if shift == 0 else -1
        result |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return result
        shift += 7


def protobuf_batches(stream: IO[bytes], source: str) -> Iterator[Any]:
    """Each ``ResourceSpans`` message of a protobuf ``ExportTraceServiceRequest``, parsed one at a time."""
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans

    while True:
        tag = _read_varint(stream)
        if tag is None:
            return
        length = _read_varint(stream)
        if tag != 0x0A or length is None or length < 0:
            raise InputError(f"not an OTLP/protobuf ExportTraceServiceRequest (field tag {tag})", source=source)
        data = stream.read(length)
        if len(data) != length:
            raise InputError("OTLP/protobuf file ends inside a batch", source=source)
        yield ResourceSpans.FromString(data)


def looks_like_json(head: bytes) -> bool:
    """Whether a file's first bytes open a JSON object."""
    return head.lstrip()[:1] == b"{"


def _varint_at(data: bytes, pos: int) -> tuple[int, int] | None:
    """The varint at ``pos`` and the position after it; None when ``data`` ends inside it."""
    shift = value = 0
    while pos < len(data) and shift < 64:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if not byte & 0x80:
            return value, pos
        shift += 7
    return None


_RESOURCE_SPANS_FIELDS = (0x0A, 0x12, 0x1A)
"""``ResourceSpans``' fields, length-delimited: resource (1), scope_spans (2), schema_url (3)."""


def looks_like_protobuf(head: bytes) -> bool:
    """Whether a file's first bytes open a protobuf ``ExportTraceServiceRequest``: its field 1 (a ``ResourceSpans``,
    length-delimited) whose own first field is one a ``ResourceSpans`` has, no longer than the batch. Field 1's tag
    is a newline: text opening with one and a bracket is JSON, not this."""
    if head[:1] != b"\x0a" or head.lstrip()[:1] in (b"{", b"["):
        return False
    outer = _varint_at(head, 1)
    if outer is None or outer[0] < 2 or outer[1] >= len(head) or head[outer[1]] not in _RESOURCE_SPANS_FIELDS:
        return False
    inner = _varint_at(head, outer[1] + 1)
    return inner is not None and inner[1] - outer[1] + inner[0] <= outer[0]


def read_spans(
    stream: IO[bytes], source: str, keep: Callable[[], bool] | None = None, *, bare: bool = False
) -> Iterator[Span]:
    """Every span of an OTLP file (a JSON document, JSON lines of them, or protobuf), a batch at a time; with
    ``keep``, only those it answers True for (asked once per span, in order); with ``bare``, protobuf spans are
    read without their attributes (what needs only their ids)."""
    from core.formats.otlp_protobuf import spans_of_message

    peek = getattr(stream, "peek", None)
    head = peek(64)[:64] if peek is not None else b""
    if peek is None:
        stream = io.BufferedReader(io.BytesIO(stream.read()))
        head = stream.peek(64)[:64]
    if looks_like_json(head):
        for batch, line in _json_batches_or_lines(stream, source):
            yield from spans_of_batch(batch, line, keep)
    else:
        for message in protobuf_batches(stream, source):
            yield from spans_of_message(message, keep, bare=bare)


def _json_batches_or_lines(stream: IO[bytes], source: str) -> Iterator[tuple[Any, int | None]]:
    """JSON lines of requests (the collector's file exporter) parsed a line at a time; anything else, or a line
    longer than ``LINE_LIMIT``, cut by the scanner."""
    first = stream.readline(LINE_LIMIT)
    document = _document(first)
    if document is None:
        yield from _json_batches(_Prefixed(first, stream), source)
        return
    number = 1
    while document is not None:
        for batch in _get(document, "resourceSpans", "resource_spans") or []:
            yield batch, number
        line = stream.readline(LINE_LIMIT)
        number += 1
        while line and not line.strip():
            line = stream.readline(LINE_LIMIT)
            number += 1
        if not line:
            return
        document = _document(line)
        if document is None:
            raise InputError(
                "not a JSON line of an OTLP request (or longer than can be read)", source=source, line=number
            )


def _document(line: bytes) -> dict[str, Any] | None:
    """A whole line's request, or None when the line is not one whole JSON object."""
    if not line.endswith(b"\n") and len(line) >= LINE_LIMIT:
        return None
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


class _Prefixed:
    """A stream with bytes already read put back in front."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self.head, self.stream = head, stream

    def read(self, size: int = -1) -> bytes:
        if self.head:
            head, self.head = self.head, b""
            return head
        return self.stream.read(size)
