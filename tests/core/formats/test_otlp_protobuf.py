"""Protobuf spans read straight from the parsed message give what the JSON mapping of the same batch gives."""

from __future__ import annotations

import base64
import math
from typing import Any

from google.protobuf.json_format import MessageToDict, ParseDict
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans

from core.formats.otlp import spans_of_batch
from core.formats.otlp_protobuf import spans_of_message

TRICKY_ATTRIBUTES: list[dict[str, Any]] = [
    {"key": "text", "value": {"stringValue": 'a "quoted" ] } value'}},
    {"key": "empty", "value": {"stringValue": ""}},
    {"key": "count", "value": {"intValue": "-9007199254740993"}},
    {"key": "ratio", "value": {"doubleValue": 0.1}},
    {"key": "nan", "value": {"doubleValue": "NaN"}},
    {"key": "inf", "value": {"doubleValue": "-Infinity"}},
    {"key": "flag", "value": {"boolValue": False}},
    {"key": "raw", "value": {"bytesValue": base64.b64encode(b"\x00\xffbytes").decode()}},
    {"key": "list", "value": {"arrayValue": {"values": [{"intValue": "1"}, {"stringValue": "two"}, {}]}}},
    {"key": "map", "value": {"kvlistValue": {"values": [{"key": "inner", "value": {"boolValue": True}}]}}},
    {"key": "unset"},
    {"key": "", "value": {"stringValue": "a key-value without a key"}},
]


def _batch() -> ResourceSpans:
    span = {
        "traceId": base64.b64encode(bytes(range(1, 17))).decode(),
        "spanId": base64.b64encode(bytes(range(1, 9))).decode(),
        "name": "chat",
        "startTimeUnixNano": "1760000000000000000",
        "attributes": TRICKY_ATTRIBUTES,
        "droppedAttributesCount": 3,
        "events": [{"name": "gen_ai.choice", "timeUnixNano": "1760000000000000001", "attributes": TRICKY_ATTRIBUTES}],
        "status": {"code": "STATUS_CODE_ERROR"},
    }
    child = {**span, "spanId": base64.b64encode(bytes(range(9, 17))).decode(), "parentSpanId": span["spanId"]}
    child.pop("status")
    document = {
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "agent"}}]},
        "scopeSpans": [{"scope": {"name": "instrumentation"}, "spans": [span, child]}, {"spans": [child]}],
    }
    return ParseDict(document, ResourceSpans())


def _through_json(batch: ResourceSpans) -> list[Any]:
    as_json = MessageToDict(batch)
    for scope in as_json["scopeSpans"]:
        for span in scope["spans"]:
            for key in ("traceId", "spanId", "parentSpanId"):
                if key in span:
                    span[key] = base64.b64decode(span[key]).hex()
    return list(spans_of_batch(as_json, None))


def _comparable(value: Any) -> Any:
    """NaN is not equal to itself: compared by its spelling."""
    return "NaN!" if isinstance(value, float) and math.isnan(value) else value


def test_every_kind_of_value_reads_as_its_json_mapping_reads() -> None:
    batch = _batch()
    direct, mapped = list(spans_of_message(batch)), _through_json(batch)
    assert [repr(_comparable(s)) for s in direct] == [repr(_comparable(s)) for s in mapped]
    assert direct[0].attributes["count"] == -9007199254740993
    assert "" not in direct[0].attributes
    assert (direct[0].is_error, direct[1].is_error, direct[1].parent_id) == (True, False, direct[0].span_id)


def test_keep_is_asked_once_per_span_in_order_and_skips_the_others() -> None:
    asked = iter([False, True, False])
    kept = list(spans_of_message(_batch(), lambda: next(asked)))
    assert [s.span_id for s in kept] == [bytes(range(9, 17)).hex()]


def test_a_bare_span_has_its_ids_and_name_and_no_attributes() -> None:
    bare = list(spans_of_message(_batch(), bare=True))
    full = list(spans_of_message(_batch()))
    assert [(s.trace_id, s.span_id, s.parent_id, s.name) for s in bare] == [
        (s.trace_id, s.span_id, s.parent_id, s.name) for s in full
    ]
    assert all(s.attributes == {} for s in bare)
