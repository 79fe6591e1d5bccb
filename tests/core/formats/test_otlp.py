"""OTLP files read a batch at a time: hex ids (and a protobuf JSON mapping's base64 ones), JSON cut at batch
boundaries whatever the read size, JSON lines of requests, and the protobuf encoding giving what its JSON gives."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

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


@pytest.mark.parametrize("line_limit", [1 << 20, 64])
def test_json_lines_are_read_whole_and_a_line_too_long_is_cut_by_the_scanner(
    line_limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(otlp, "LINE_LIMIT", line_limit)
    lines = b"".join(orjson.dumps({"resourceSpans": [_batch(n), _batch(n + 10)]}) + b"\n\n" for n in range(3))
    spans = list(otlp.read_spans(io.BufferedReader(io.BytesIO(lines)), "f.jsonl"))  # type: ignore[arg-type]
    assert [s.span_id for s in spans] == [f"{n:016x}" for k in range(3) for n in (k, k + 10)]
    assert [s.line for s in spans] == [1, 1, 3, 3, 5, 5]
