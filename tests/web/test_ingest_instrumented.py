"""The real instrumentations, live: an agent's provider SDK calls to the stub provider, recorded by the
OpenTelemetry GenAI, OpenLLMetry and OpenInference instrumentations and sent by the real OTLP/HTTP exporter to
``POST /v1/traces`` as they end, are on screen as the conversation a file import of the same spans gives.

One server (uvicorn on loopback, SQLite, the job queue in process) for the module; one conversation per
instrumentation (``tests.ingest.instrumented_agents`` runs the agent).
"""

from __future__ import annotations

import html
import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core.formats.importing import read_foreign
from core.formats.registry import format_named
from core.store import Store
from tests.ingest.genai_spans import otlp_body, tracer_provider
from tests.ingest.instrumented_agents import (
    CITIES,
    INSTRUMENTATIONS,
    MODELS,
    PREAMBLE,
    SYSTEM,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    TOOL_SCHEMA,
    Instrumentation,
    answers,
    call_ids,
    failure_result,
    questions,
    run_agent,
    weather,
)
from tests.replay.web_server import serving
from web.app import create_app
from web.devtools.stub_provider import StubServer
from web.settings import Settings


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    with Store.open(str(tmp_path_factory.mktemp("instrumented") / "live.db")) as opened:
        yield opened


@pytest.fixture(scope="module")
def base(store: Store) -> Iterator[str]:
    with serving(create_app(Settings(), store)) as url:
        yield url


def _file_import(tmp_path: Path, body: bytes) -> tuple[str, list[str]]:
    """The conversation a file of the spans gives: its id and its export."""
    with Store.open(str(tmp_path / "file.db")) as other:
        records, foreign = read_foreign(format_named("otlp"), io.BufferedReader(io.BytesIO(body)), "spans.pb")
        other.import_records(records, source="spans.pb", store_lines=foreign.store_lines)
        assert len({r.message.conversation_id for r in records}) == 1
        return records[0].message.conversation_id, list(other.export_texts())


def _assembled_as(store: Store, conversation: str, expected: list[str]) -> list[str]:
    """The conversation's stored export once it equals ``expected`` (spans were sent one by one as they ended, and
    the assembly job runs off the request), or as it stands after the deadline."""
    deadline = time.monotonic() + 30
    while True:
        try:
            stored = list(store.export_texts(conversation))
        except LookupError:
            stored = []
        if stored == expected or time.monotonic() > deadline:
            return stored
        time.sleep(0.1)


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS, ids=str)
def test_an_instrumented_agent_s_live_spans_are_on_screen_as_a_file_of_them_gives(
    instrumentation: Instrumentation,
    store: Store,
    base: str,
    stub: StubServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = store.api_keys.create("ingest", instrumentation.name)[1]
    conversation = f"live-{instrumentation}"
    exporter = OTLPSpanExporter(endpoint=f"{base}/v1/traces", headers={"Authorization": f"Bearer {key}"})
    memory = InMemorySpanExporter()
    provider = tracer_provider(exporter, memory)
    assert run_agent(instrumentation, stub, provider, conversation, monkeypatch) == list(answers(conversation))
    provider.shutdown()
    assert stub.state.refusals == []

    stored_id, file_texts = _file_import(tmp_path, otlp_body(memory.get_finished_spans()))
    assert stored_id == conversation or not instrumentation.names_conversation
    assert _assembled_as(store, stored_id, file_texts) == file_texts

    detail = store.get_conversation(stored_id)
    first, second = questions(conversation)
    assert [(m.message.role, m.message.content) for m in detail.messages] == [
        ("system", SYSTEM),
        ("user", first),
        ("user", second),
    ]
    turn = detail.messages[1].message.intermediate_trace.records  # type: ignore[union-attr]
    assert [r.role for r in turn] == ["assistant", "tool", "tool", "assistant"]
    assert turn[0].content == PREAMBLE and turn[3].content == answers(conversation)[0]
    calls = [(c.id, c.name, c.arguments) for c in turn[0].tool_calls]  # type: ignore[union-attr]
    ids = call_ids(conversation)
    assert calls == [(i, TOOL_NAME, f'{{"city": "{city}"}}') for i, city in zip(ids, CITIES, strict=True)]
    results = [(r.call_id, r.name, r.result, r.is_error) for t in turn[1:3] for r in t.tool_reses]  # type: ignore[union-attr]
    assert results == [(i, TOOL_NAME, weather(c, conversation), False) for i, c in zip(ids, CITIES, strict=True)]
    answered = detail.messages[2].message.intermediate_trace.records  # type: ignore[union-attr]
    assert [(r.role, r.content) for r in answered] == [("assistant", answers(conversation)[1])]

    context = store.request_context(stored_id)
    assert context is not None
    assert (context.provider, context.model) == (instrumentation.provider, MODELS[instrumentation.sdk])
    assert [(t.name, t.description, t.parameters) for t in context.tools] == [
        (TOOL_NAME, TOOL_DESCRIPTION, TOOL_SCHEMA)
    ]

    page = httpx.get(f"{base}/conversations/{stored_id}", timeout=30).text
    for call_id, city in zip(ids, CITIES, strict=True):
        assert f'data-tool-call="{call_id}"' in page and f'data-tool-result="{call_id}"' in page
        assert html.escape(weather(city, conversation)) in page
    assert page.count("data-jump-call") == len(CITIES)  # each result links back to its call
    assert html.escape(answers(conversation)[1]) in page


@pytest.mark.parametrize("instrumentation", INSTRUMENTATIONS, ids=str)
def test_a_tool_run_that_failed_is_an_error_result_on_screen(
    instrumentation: Instrumentation,
    store: Store,
    base: str,
    stub: StubServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    conversation = f"failed-{instrumentation}"
    memory = InMemorySpanExporter()
    provider = tracer_provider(memory)
    run_agent(instrumentation, stub, provider, conversation, monkeypatch, failing="Lyon")
    provider.shutdown()
    body = io.BufferedReader(io.BytesIO(otlp_body(memory.get_finished_spans())))
    records, foreign = read_foreign(format_named("otlp"), body, "spans.pb")
    store.import_records(records, source="spans.pb", store_lines=foreign.store_lines)
    stored_id = records[0].message.conversation_id

    turn = store.get_conversation(stored_id).messages[1].message.intermediate_trace.records  # type: ignore[union-attr]
    results = [(r.name, r.result, r.is_error) for t in turn[1:3] for r in t.tool_reses]  # type: ignore[union-attr]
    assert results == [
        (TOOL_NAME, weather("Paris", conversation), False),
        (TOOL_NAME, failure_result("Lyon"), True),
    ]
    page = httpx.get(f"{base}/conversations/{stored_id}", timeout=30).text
    paris, lyon = call_ids(conversation)
    assert f'data-tool-result="{paris}" data-is-error="false"' in page
    assert f'data-tool-result="{lyon}" data-is-error="true"' in page


def test_the_same_agent_recorded_by_each_instrumentation_is_the_same_conversation(
    stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = []
    for instrumentation in INSTRUMENTATIONS:
        memory = InMemorySpanExporter()
        provider = tracer_provider(memory)
        run_agent(instrumentation, stub, provider, "same", monkeypatch)
        provider.shutdown()
        body = io.BufferedReader(io.BytesIO(otlp_body(memory.get_finished_spans())))
        records, _ = read_foreign(format_named("otlp"), body, "spans.pb")
        seen.append([_said(r.raw) for r in records])
    assert len(seen[0]) == 3 and all(said == seen[0] for said in seen[1:])


_RUN_FIELDS = ("msg_id", "conversation_id", "create_ts", "additional_kwargs")
"""What each run or instrumentation makes anew: ids, times, the spans' own attributes (OpenLLMetry names no
conversation)."""


def _said(value: Any) -> Any:
    """A stored message's role, kinds, texts, calls and results, all the way down."""
    if isinstance(value, dict):
        return {k: _said(v) for k, v in value.items() if k not in _RUN_FIELDS}
    if isinstance(value, list):
        return [_said(v) for v in value]
    return value
