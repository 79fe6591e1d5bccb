"""``POST /v1/traces``: the real OpenTelemetry exporter's spans become conversations, and every refusal its status.

One server (uvicorn on loopback, SQLite, the job queue in process) for the module. A conversation sent
live is compared with a file import of the same spans: the same messages, byte for byte.
"""

from __future__ import annotations

import gzip
import io
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core.accounts import Accounts, Role
from core.formats.importing import read_foreign
from core.formats.registry import format_named
from core.store import Store
from tests.ingest.genai_spans import limited_span_body, otlp_body, record, recorded_spans, tracer_provider
from tests.replay.web_server import serving
from web.app import create_app
from web.settings import Settings

LIMIT = 256 * 1024


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    with Store.open(str(tmp_path_factory.mktemp("ingest") / "live.db")) as opened:
        yield opened


@pytest.fixture(scope="module")
def key(store: Store) -> str:
    return store.api_keys.create("ingest", "tests")[1]


@pytest.fixture(scope="module")
def url(store: Store) -> Iterator[str]:
    with serving(create_app(Settings(ingest_max_bytes=LIMIT), store)) as base:
        yield base + "/v1/traces"


def _wait_for(store: Store, conversation_id: str) -> None:
    deadline = time.monotonic() + 20
    while True:
        try:
            if store.get_summary(conversation_id).messages:
                return
        except LookupError:
            pass
        assert time.monotonic() < deadline, f"{conversation_id} was not assembled"
        time.sleep(0.05)


def _file_import(tmp_path: Path, body: bytes) -> list[str]:
    with Store.open(str(tmp_path / "file.db")) as other:
        records, foreign = read_foreign(format_named("otlp"), io.BufferedReader(io.BytesIO(body)), "spans.pb")
        other.import_records(records, source="spans.pb", store_lines=foreign.store_lines)
        return list(other.export_texts())


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_the_sdk_exporter_s_spans_become_the_conversation_a_file_of_them_gives(
    store: Store, key: str, url: str, tmp_path: Path, compression: Compression
) -> None:
    exporter = OTLPSpanExporter(endpoint=url, headers={"Authorization": f"Bearer {key}"}, compression=compression)
    offset = 10 if compression is Compression.Gzip else 0
    memory = InMemorySpanExporter()
    provider = tracer_provider(exporter, memory)
    record(provider, 1, offset=offset)
    provider.shutdown()
    conversation = f"conv-{offset}"
    _wait_for(store, conversation)
    detail = store.get_conversation(conversation)
    roles = [m.message.role for m in detail.messages]
    assert roles == ["system", "user", "user"]
    trace = detail.messages[1].message.intermediate_trace.records  # type: ignore[union-attr]
    assert [r.role for r in trace] == ["assistant", "tool", "assistant"]
    context = store.request_context(conversation)
    assert context is not None and context.model == "gpt-4o" and context.tools
    file_texts = _file_import(tmp_path, otlp_body(memory.get_finished_spans()))
    assert list(store.export_texts(conversation)) == file_texts


def _post(url: str, body: bytes, **headers: str) -> httpx.Response:
    return httpx.post(url, content=body, headers=headers, timeout=30)


def test_a_span_that_dropped_attributes_warns_on_its_cards_that_messages_may_be_missing(
    store: Store, key: str, url: str
) -> None:
    body = limited_span_body("dropped", turns=10, max_attributes=16)
    records, _ = read_foreign(format_named("otlp"), io.BufferedReader(io.BytesIO(body)), "spans.pb")
    conversation = records[0].message.conversation_id  # its id attribute was among the evicted
    sent = _post(url, body, **{"content-type": "application/x-protobuf", "authorization": f"Bearer {key}"})
    assert sent.status_code == 200
    _wait_for(store, conversation)

    page = httpx.get(f"{url.removesuffix('/v1/traces')}/conversations/{conversation}", timeout=30).text
    assert page.count("data-incomplete-note") == page.count("data-msg-id=") > len(records)  # the trace record too
    assert "dropped 10 attributes past its SDK&#39;s limit: messages may be missing" in page


def test_without_an_active_ingest_key_an_export_is_refused(store: Store, key: str, url: str) -> None:
    body = otlp_body(recorded_spans(1))
    protobuf = "application/x-protobuf"
    assert _post(url, body, **{"content-type": protobuf}).status_code == 401
    assert _post(url, body, **{"content-type": protobuf, "authorization": "Bearer tlk_nope"}).status_code == 401
    _, reader = store.api_keys.create("read")
    assert _post(url, body, **{"content-type": protobuf, "authorization": f"Bearer {reader}"}).status_code == 401
    revoked, token = store.api_keys.create("ingest")
    store.api_keys.revoke(revoked.id)
    refused = _post(url, body, **{"content-type": protobuf, "authorization": f"Bearer {token}"})
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"


def test_an_ingest_key_of_a_disabled_account_is_refused(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "own.db")) as own:  # an account turns logins on: not the module's store
        accounts = Accounts(own)
        accounts.create("exporter", Role.VIEWER, "exporter password, long enough")
        _, token = own.api_keys.create("ingest", "agent", user="exporter")
        headers = {"content-type": "application/x-protobuf", "authorization": f"Bearer {token}"}
        with serving(create_app(Settings(), own)) as base:
            assert _post(base + "/v1/traces", otlp_body(recorded_spans(1)), **headers).status_code == 200
            accounts.set_disabled("exporter", True)
            assert _post(base + "/v1/traces", otlp_body(recorded_spans(1)), **headers).status_code == 401


def test_each_refusal_has_its_otlp_status(key: str, url: str) -> None:
    auth = {"authorization": f"Bearer {key}"}
    protobuf = {**auth, "content-type": "application/x-protobuf"}
    as_json = {**auth, "content-type": "application/json"}
    assert _post(url, b"{}", **{**auth, "content-type": "text/plain"}).status_code == 415
    assert _post(url, b"", **{**protobuf, "content-encoding": "br"}).status_code == 415
    bad = _post(url, b"\xff\xff\xff", **protobuf)
    assert bad.status_code == 400 and bad.headers["content-type"] == "application/x-protobuf"
    assert _post(url, b'{"resourceSpans": 3}', **as_json).status_code == 400
    assert _post(url, b"[1, 2]", **as_json).status_code == 400
    assert _post(url, b"not json", **as_json).status_code == 400
    assert _post(url, b"x" * (LIMIT + 1), **protobuf).status_code == 413
    bomb = gzip.compress(b"\x00" * (LIMIT * 4))
    assert len(bomb) < LIMIT and _post(url, bomb, **{**protobuf, "content-encoding": "gzip"}).status_code == 413
    assert _post(url, b"\x1f\x8b not gzip", **{**protobuf, "content-encoding": "gzip"}).status_code == 400


def test_an_export_from_another_origin_needs_only_its_key(key: str, url: str) -> None:
    headers = {"content-type": "application/json", "authorization": f"Bearer {key}", "origin": "http://other.example"}
    answered = _post(url, b"{}", **headers)
    assert answered.status_code == 200 and answered.json() == {}


def test_spans_with_invalid_ids_are_named_in_partial_success(key: str, url: str) -> None:
    span = {"traceId": "00" * 16, "spanId": "ab" * 8, "name": "chat broken"}
    body = orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    answered = _post(url, body, **{"content-type": "application/json", "authorization": f"Bearer {key}"})
    assert answered.status_code == 200
    partial = answered.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1" and "chat broken" in partial["errorMessage"]
    headers = {"content-type": "application/x-protobuf", "authorization": f"Bearer {key}"}
    protobuf = _post(url, otlp_body(recorded_spans(1)), **headers)
    assert protobuf.status_code == 200 and ExportTraceServiceResponse.FromString(protobuf.content).ByteSize() == 0


def test_the_list_marks_a_conversation_still_receiving_spans_live(store: Store, key: str, url: str) -> None:
    exporter = OTLPSpanExporter(endpoint=url, headers={"Authorization": f"Bearer {key}"})
    provider = tracer_provider(exporter)
    record(provider, 1, offset=20)
    provider.shutdown()
    _wait_for(store, "conv-20")
    page = httpx.get(url.removesuffix("/v1/traces") + "/", timeout=30).text
    row = page.split('data-conversation-id="conv-20"', 1)[1].split("</tr>", 1)[0]
    assert "data-live" in row
    base = url.removesuffix("/v1/traces")
    timeline = httpx.get(f"{base}/conversations/conv-20", timeout=30).text
    assert "data-live-timeline" in timeline and 'hx-trigger="every 3s"' in timeline
    poll = {"HX-Request": "true", "HX-Trigger": "timeline"}
    polled = httpx.get(f"{base}/conversations/conv-20", headers=poll, timeout=30)
    assert polled.status_code == 200 and "It is sunny in city 1." in polled.text


def test_a_conversation_no_longer_live_stops_its_timeline_s_polling(store: Store, url: str, tmp_path: Path) -> None:
    memory = InMemorySpanExporter()
    provider = tracer_provider(memory)
    record(provider, 1, offset=30)
    provider.shutdown()
    body = otlp_body(memory.get_finished_spans())
    records, foreign = read_foreign(format_named("otlp"), io.BufferedReader(io.BytesIO(body)), "spans.pb")
    store.import_records(records, source="spans.pb", store_lines=foreign.store_lines)  # a file: never live
    base = url.removesuffix("/v1/traces")
    assert "data-live-timeline" not in httpx.get(f"{base}/conversations/conv-30", timeout=30).text
    poll = {"HX-Request": "true", "HX-Trigger": "timeline"}
    assert httpx.get(f"{base}/conversations/conv-30", headers=poll, timeout=30).status_code == 286
