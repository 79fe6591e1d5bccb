"""Arize Phoenix's span JSON read as spans: what Phoenix's client and its span exports write.

A JSON array (or JSON lines) of ``{"name", "context": {"trace_id", "span_id"}, "span_kind", "parent_id",
"start_time", "end_time", "status_code", "attributes", "events"}`` with ISO times
(``phoenix.trace.schemas.Span``); attributes flat (``llm.input_messages.0.message.role``) or nested
(``{"llm": {"input_messages": [...]}}``), both read as the flat keys OpenInference names.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

import orjson

from core.errors import InputError
from core.formats.events import parse_time
from core.formats.otlp import Span, SpanEvent

SPAN_KIND = "openinference.span.kind"


def flat(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nested attributes as OpenInference's flat keys; lists of objects indexed (``a.0.b``), lists of values kept."""
    out = {} if out is None else out
    if isinstance(value, dict):
        for key, item in value.items():
            flat(item, f"{prefix}{key}.", out)
    elif isinstance(value, list) and any(isinstance(v, dict) for v in value):
        for index, item in enumerate(value):
            flat(item, f"{prefix}{index}.", out)
    else:
        out[prefix[:-1]] = value
    return out


def span_of(raw: Any, line: int | None) -> Span | None:
    """One Phoenix span as a span, or None when the object is not one."""
    if not isinstance(raw, dict) or not isinstance(raw.get("context"), dict):
        return None
    attributes = flat(raw.get("attributes") or {})
    if raw.get("span_kind") and SPAN_KIND not in attributes:
        attributes[SPAN_KIND] = raw["span_kind"]
    context = raw["context"]
    return Span(
        trace_id=str(context.get("trace_id") or ""),
        span_id=str(context.get("span_id") or ""),
        parent_id=raw.get("parent_id"),
        name=str(raw.get("name", "")),
        start=parse_time(raw.get("start_time")),
        end=parse_time(raw.get("end_time")),
        attributes=attributes,
        events=[
            SpanEvent(str(e.get("name", "")), parse_time(e.get("timestamp")), flat(e.get("attributes") or {}))
            for e in raw.get("events") or []
            if isinstance(e, dict)
        ],
        is_error=raw.get("status_code") == "ERROR",
        line=line,
    )


def looks_like_phoenix(head: bytes) -> bool:
    """Whether a file's first bytes hold Phoenix spans (a ``context`` with a ``span_id``, and a ``span_kind``)."""
    return head.lstrip()[:1] in (b"[", b"{") and b'"context"' in head and b'"span_kind"' in head


def read_phoenix_spans(stream: IO[bytes], source: str) -> Iterator[Span]:
    """Every span of a Phoenix span file (a JSON array, one object, or JSON lines)."""
    data = stream.read()
    try:
        document = orjson.loads(data)
        rows: list[tuple[Any, int | None]] = [
            (r, None) for r in (document if isinstance(document, list) else [document])
        ]
    except orjson.JSONDecodeError:
        rows = []
        for number, text in enumerate(data.splitlines(), 1):
            if text.strip():
                try:
                    rows.append((orjson.loads(text), number))
                except orjson.JSONDecodeError as exc:
                    raise InputError(f"not JSON: {exc}", source=source, line=number) from None
    for raw, where in rows:
        span = span_of(raw, where)
        if span is None:
            raise InputError("not a Phoenix span (no context)", source=source, line=where)
        yield span
