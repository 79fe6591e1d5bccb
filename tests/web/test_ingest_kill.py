"""``kill -9`` of ``traceloupe serve`` while exporters send spans: every span answered 200 is in the store after
a restart, and the restarted server assembles its conversation (the start-up hook queues what waits), as a file
import of the same spans gives it."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core.formats.importing import read_foreign
from core.formats.registry import format_named
from core.ingest.intake import waiting
from core.store import Store
from tests.ingest.genai_spans import otlp_body, record, tracer_provider
from tests.jobs.conftest import wait_for
from tests.replay.web_server import free_port

CONVERSATIONS = 40
ANSWERED_BEFORE_KILL = 8
"""Exports answered 200 before the kill: the sender is still sending when it lands."""


def _serve(db: str, port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "web.cli", "serve", "--db", db, "--port", str(port)]
    return subprocess.Popen(command, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _up(base: str) -> bool:
    try:
        return httpx.get(base + "/", timeout=5).status_code == 200
    except httpx.TransportError:
        return False


def _conversations() -> dict[str, list[ReadableSpan]]:
    memory = InMemorySpanExporter()
    provider = tracer_provider(memory)
    record(provider, CONVERSATIONS, offset=700)
    provider.shutdown()
    by_trace: dict[int, list[ReadableSpan]] = {}
    for span in memory.get_finished_spans():
        assert span.context is not None
        by_trace.setdefault(span.context.trace_id, []).append(span)
    return {f"conv-{700 + i}": spans for i, spans in enumerate(by_trace.values())}


class Sender(threading.Thread):
    """Sends one conversation per export until a request fails; keeps which were answered 200."""

    def __init__(self, url: str, key: str, bodies: dict[str, bytes]) -> None:
        super().__init__(daemon=True)
        self.url, self.key, self.bodies = url, key, bodies
        self.answered: list[str] = []

    def run(self) -> None:
        headers = {"content-type": "application/x-protobuf", "authorization": f"Bearer {self.key}"}
        with httpx.Client(timeout=10) as client:
            for conversation, body in self.bodies.items():
                try:
                    response = client.post(self.url, content=body, headers=headers)
                except httpx.TransportError:
                    return
                if response.status_code != 200:
                    return
                self.answered.append(conversation)


def _file_texts(tmp_path: Path, spans: list[ReadableSpan], conversation: str) -> list[str]:
    body = otlp_body(spans)
    with Store.open(str(tmp_path / f"{conversation}.db")) as clean:
        records, foreign = read_foreign(format_named("otlp"), io.BufferedReader(io.BytesIO(body)), "spans.pb")
        clean.import_records(records, source="spans.pb", store_lines=foreign.store_lines)
        return list(clean.export_texts(conversation))


@pytest.mark.slow  # two starts of serve
def test_every_span_answered_before_a_kill_9_is_stored_and_assembled_after_a_restart(tmp_path: Path) -> None:
    db = str(tmp_path / "live.db")
    with Store.open(db) as store:
        key = store.api_keys.create("ingest", "kill")[1]
    spans = _conversations()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = _serve(db, port)
    sender = Sender(base + "/v1/traces", key, {cid: otlp_body(s) for cid, s in spans.items()})
    try:
        wait_for(lambda: _up(base), 30, "serve")
        sender.start()
        wait_for(lambda: len(sender.answered) >= ANSWERED_BEFORE_KILL, 30, "the first answers")
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
    sender.join(timeout=30)
    answered = list(sender.answered)
    assert ANSWERED_BEFORE_KILL <= len(answered) < CONVERSATIONS, "the kill did not land mid-stream"

    server = _serve(db, port)
    try:
        with Store.open(db) as store:
            wait_for(lambda: waiting(store, 1) == 0, 30, "the restarted server's assembly")
            for conversation in answered:
                expected = _file_texts(tmp_path, spans[conversation], conversation)
                assert list(store.export_texts(conversation)) == expected
    finally:
        server.terminate()
        server.wait(timeout=30)
