"""OTLP/protobuf spans read straight from the parsed messages into ``Span``s, as their JSON mapping would read.

Going through protobuf's JSON mapping (``MessageToDict``) walks every field in Python and then every dict again;
reading the parsed message's fields does it once. What comes out is what ``otlp.spans_of_batch`` gives for the
mapping of the same batch: ids as hex, ``int64`` as ``int``, ``bytes`` as base64 text, a non-finite double as the
mapping spells it, a key-value without a key left out, a value of no known kind as None.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from core.formats.otlp import Span, SpanEvent

_ERROR = 2
"""``Status.STATUS_CODE_ERROR``."""


def _time(nanos: int) -> datetime | None:
    return datetime.fromtimestamp(nanos / 1e9, tz=UTC) if nanos > 0 else None


def _double(value: float) -> float | str:
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def any_value(value: Any) -> Any:
    """An ``AnyValue`` message as a Python value."""
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    if kind == "int_value":
        return value.int_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "double_value":
        return _double(value.double_value)
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return attributes(value.kvlist_value.values)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return None


def attributes(items: Any) -> dict[str, Any]:
    """Repeated ``KeyValue`` as a dict."""
    return {kv.key: any_value(kv.value) for kv in items if kv.key}


def spans_of_message(batch: Any, keep: Callable[[], bool] | None = None, *, bare: bool = False) -> Iterator[Span]:
    """The spans of one ``ResourceSpans`` message; with ``keep``, only those for which it answers True (it is asked
    once per span, in order, so it can count positions); ``bare``: ids, name and times only, no attributes read."""
    resource: dict[str, Any] | None = None
    for scope_spans in batch.scope_spans:
        scope = scope_spans.scope.name
        for span in scope_spans.spans:
            if keep is not None and not keep():
                continue
            if bare:
                yield _span(span, scope, {})
                continue
            if resource is None:
                resource = attributes(batch.resource.attributes)
            yield _span(
                span,
                scope,
                attributes(span.attributes),
                events=[SpanEvent(e.name, _time(e.time_unix_nano), attributes(e.attributes)) for e in span.events],
                resource=resource,
                is_error=span.status.code == _ERROR,
                dropped_attributes=span.dropped_attributes_count,
                dropped_events=span.dropped_events_count,
            )


def _span(span: Any, scope: str, attributes: dict[str, Any], **details: Any) -> Span:
    """A protobuf span's ids, name and times with ``attributes`` and the ``details`` given (a bare span: none)."""
    return Span(
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_id=span.parent_span_id.hex() or None,
        name=span.name,
        start=_time(span.start_time_unix_nano),
        end=_time(span.end_time_unix_nano),
        attributes=attributes,
        scope=scope,
        **details,
    )
