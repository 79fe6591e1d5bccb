"""OTLP files read a batch at a time: hex ids (and a protobuf JSON mapping's base64 ones), JSON cut at batch
boundaries whatever the read size, JSON lines of requests, and the protobuf encoding giving what its JSON gives."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import orjson
import pytest
from google.protobuf.json_format import MessageToDict, ParseDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from core.formats import otlp
from core.formats.importing import read_foreign
from core.formats.registry import SNIFF_BYTES, format_named, sniff

DATA = Path(__file__).parents[2] / "formats" / "data"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0AF7651916CD43DD8448EB211C80319C", "0af7651916cd43dd8448eb211c80319c"),
        ("b7ad6b7169203331", "b7ad6b7169203331"),
        ("D2n+rs/O1Jg=", "0f69feaecfced498"),  # what a generic protobuf JSON writer gives for 8 bytes
        ("ID_0", "ID_0"),
        (b"\x0f\x69", "0f69"),
    ],
)
def test_ids_are_hex_whether_written_hex_or_base64(value: Any, expected: str) -> None:
    assert otlp.hex_id(value) == expected


def _batch(n: int) -> dict[str, Any]:
    tricky = 'a "quoted" ] } [ { \\ value'
    span = {
        "traceId": "00" * 16,
        "spanId": f"{n:016x}",
        "name": tricky,
        "attributes": [{"key": "k", "value": {"stringValue": tricky}}],
    }
    return {"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "s"}, "spans": [span]}]}


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_a_json_document_is_cut_into_its_batches_whatever_the_read_size(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(otlp, "CHUNK", chunk)
    document = orjson.dumps({"resourceSpans": [_batch(n) for n in range(3)]}, option=orjson.OPT_INDENT_2)
    batches = list(otlp._json_batches(io.BytesIO(document), "f.json"))
    assert [b for b, _ in batches] == [_batch(n) for n in range(3)]
    assert [line for _, line in batches] == [3, 30, 57]
    spans = list(otlp.read_spans(io.BufferedReader(io.BytesIO(document)), "f.json"))  # type: ignore[arg-type]
    assert [s.span_id for s in spans] == [f"{n:016x}" for n in range(3)]


def test_json_lines_of_requests_are_read_line_by_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(otlp, "CHUNK", 16)
    lines = b"".join(orjson.dumps({"resourceSpans": [_batch(n)]}) + b"\n" for n in range(4))
    batches = list(otlp._json_batches(io.BytesIO(lines), "f.jsonl"))
    assert [line for _, line in batches] == [1, 2, 3, 4]


def test_a_document_cut_short_is_refused_naming_the_file() -> None:
    with pytest.raises(Exception, match="ends"):
        list(otlp._json_batches(io.BytesIO(b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x'), "cut.json"))


def test_the_protobuf_encoding_gives_what_its_json_gives(tmp_path: Path) -> None:
    source = DATA / "otlp" / "openllmetry_openai.json"
    request = ParseDict(orjson.loads(source.read_bytes()), ExportTraceServiceRequest())
    binary = tmp_path / "trace.pb"
    binary.write_bytes(request.SerializeToString())
    assert sniff(binary.read_bytes()[:SNIFF_BYTES], str(binary)).name == "otlp"
    with source.open("rb") as handle:
        from_json, _ = read_foreign(format_named("otlp"), handle, "x")
    with binary.open("rb") as handle:
        from_protobuf, _ = read_foreign(format_named("otlp"), handle, "x")
    assert [r.raw for r in from_protobuf] == [r.raw for r in from_json]
    assert from_protobuf


def test_a_real_protobuf_file_gives_what_its_otlp_json_gives(tmp_path: Path) -> None:
    # pydantic_ai_tools.pb: pydantic-ai's instrumentation serialized by the SDK's exporter (its README says how).
    binary = DATA / "otlp" / "pydantic_ai_tools.pb"
    as_json = MessageToDict(ExportTraceServiceRequest.FromString(binary.read_bytes()))
    for batch in as_json["resourceSpans"]:
        for scope in batch["scopeSpans"]:
            for span in scope["spans"]:  # OTLP/JSON writes ids as hex, not as protobuf JSON's base64
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    document = tmp_path / "trace.json"
    document.write_bytes(orjson.dumps(as_json))
    with binary.open("rb") as handle:
        from_protobuf, _ = read_foreign(format_named("otlp"), handle, "x")
    with document.open("rb") as handle:
        from_json, _ = read_foreign(format_named("otlp"), handle, "x")
    assert [r.raw for r in from_protobuf] == [r.raw for r in from_json]
    assert [r.raw["role"] for r in from_protobuf] == ["system", "user"]


def test_the_sdk_exporters_bytes_ids_are_read_as_hex_and_an_error_status_as_an_error() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("instrumentation")
    with tracer.start_as_current_span("invoke_agent") as parent, tracer.start_as_current_span("execute_tool") as tool:
        tool.set_attributes({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"})
        tool.set_status(Status(StatusCode.ERROR, "no such city"))
    data = encode_spans(exporter.get_finished_spans()).SerializeToString()
    assert sniff(data[:SNIFF_BYTES], "x").name == "otlp"
    spans = {s.name: s for s in otlp.read_spans(io.BufferedReader(io.BytesIO(data)), "x")}  # type: ignore[arg-type]
    context = parent.get_span_context()
    assert spans["execute_tool"].parent_id == spans["invoke_agent"].span_id == f"{context.span_id:016x}"
    assert spans["execute_tool"].trace_id == f"{context.trace_id:032x}"
    assert (spans["execute_tool"].is_error, spans["invoke_agent"].is_error) == (True, False)


@pytest.mark.parametrize("line_limit", [1 << 20, 64])
def test_json_lines_are_read_whole_and_a_line_too_long_is_cut_by_the_scanner(
    line_limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(otlp, "LINE_LIMIT", line_limit)
    lines = b"".join(orjson.dumps({"resourceSpans": [_batch(n), _batch(n + 10)]}) + b"\n\n" for n in range(3))
    spans = list(otlp.read_spans(io.BufferedReader(io.BytesIO(lines)), "f.jsonl"))  # type: ignore[arg-type]
    assert [s.span_id for s in spans] == [f"{n:016x}" for k in range(3) for n in (k, k + 10)]
    assert [s.line for s in spans] == [1, 1, 3, 3, 5, 5]


@pytest.mark.parametrize(("binary", "twin"), [("trace.pb", "trace.json"), ("traces.pb", "traces.jsonl")])
def test_a_public_protobuf_file_reads_as_the_spans_of_its_published_json_twin(binary: str, twin: str) -> None:
    # otlp2parquet's test data: the OpenTelemetry demo's spans (no model calls) as protobuf and as OTLP/JSON.
    def spans(name: str) -> list[otlp.Span]:
        with (DATA / "otlp" / f"otlp2parquet_{name}").open("rb") as handle:
            return list(otlp.read_spans(handle, name))

    from_protobuf, from_json = spans(binary), spans(twin)
    assert len(from_protobuf) == {"trace.pb": 2, "traces.pb": 19}[binary]
    assert [(s.trace_id, s.span_id, s.parent_id, s.name) for s in from_protobuf] == [
        (s.trace_id, s.span_id, s.parent_id, s.name) for s in from_json
    ]
    assert [(s.start, s.end, s.attributes, s.resource, s.scope, s.is_error) for s in from_protobuf] == [
        (s.start, s.end, s.attributes, s.resource, s.scope, s.is_error) for s in from_json
    ]
    path = DATA / "otlp" / f"otlp2parquet_{binary}"
    assert sniff(path.read_bytes()[:SNIFF_BYTES], str(path)).name == "otlp"
    with path.open("rb") as handle:
        records, _ = read_foreign(format_named("otlp"), handle, str(path))
    assert records == []  # an HTTP service's spans: no model call, nothing stored
