"""Writes the OTLP/JSON files of ``tests/formats/data`` that the real instrumentations recorded: the agent of
``tests.ingest.instrumented_agents`` (two turns, two parallel tool calls of which the second fails) run against
the stub provider under each instrumentation, its spans encoded by the OpenTelemetry SDK's OTLP encoder and
written in the OTLP/JSON mapping (hex ids, https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding).

Regenerating them is deliberate (review the diff; the README gives the packages' versions):

    .venv/bin/python -m tests.ingest.record_instrumented [NAME...]    # genai-openai ...; none: every one
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.ingest.instrumented_agents import INSTRUMENTATIONS, Instrumentation, run_agent
from web.devtools.stub_provider import StubServer

DATA = Path(__file__).parents[1] / "formats" / "data"
FAILING = "Lyon"
_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def fixture_path(instrumentation: Instrumentation) -> Path:
    """Where the file of ``instrumentation``'s spans is kept: by the convention its spans follow."""
    folder = "otlp" if instrumentation.convention == "genai" else "openinference"
    return DATA / folder / f"{instrumentation.name.replace('-', '_')}_agent.json"


def conversation_of(instrumentation: Instrumentation) -> str:
    """The conversation id of its run: its file's name (``genai-openai-agent``)."""
    return fixture_path(instrumentation).stem.replace("_", "-")


def _hex_ids(value: Any) -> Any:
    """The protobuf JSON mapping's base64 ids as OTLP/JSON's hex."""
    if isinstance(value, dict):
        return {k: base64.b64decode(v).hex() if k in _ID_FIELDS else _hex_ids(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def record(instrumentation: Instrumentation, stub: StubServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The OTLP/JSON export request of one run of the agent under ``instrumentation``."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))  # random ids, as in use
    provider.add_span_processor(SimpleSpanProcessor(memory))
    run_agent(instrumentation, stub, provider, conversation_of(instrumentation), monkeypatch, failing=FAILING)
    provider.shutdown()
    request: dict[str, Any] = _hex_ids(MessageToDict(encode_spans(memory.get_finished_spans())))
    return request


def main(names: list[str]) -> None:
    stub = StubServer().start()
    with pytest.MonkeyPatch.context() as monkeypatch:
        for instrumentation in INSTRUMENTATIONS:
            if names and instrumentation.name not in names:
                continue
            path = fixture_path(instrumentation)
            path.write_text(json.dumps(record(instrumentation, stub, monkeypatch), indent=1) + "\n")
            print(path.relative_to(DATA))
    stub.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
