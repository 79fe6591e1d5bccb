"""``POST /v1/traces`` when exports wait for assembly past the bound (503 and Retry-After, nothing stored), and the
ingest key in no log line, no page and no row of the store but as its hash."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core.ingest.intake import store_batch, waiting
from core.jobs import queue_for
from core.store import Store
from core.store.api_keys import key_hash
from tests.ingest.genai_spans import otlp_body, recorded_spans
from tests.replay.canary import dump_database
from tests.web.web_corpus import BASE_URL
from web.app import create_app
from web.replays.service import RunService
from web.settings import Settings


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(str(tmp_path / "bounded.db")) as opened:
        yield opened


@pytest.fixture
def client(store: Store) -> Iterator[TestClient[Litestar]]:
    # A queue nobody starts: what is stored stays pending, as behind a slow assembly.
    runs = RunService(store, queue=queue_for(store))
    with TestClient(create_app(Settings(ingest_max_pending=2), store, runs=runs), base_url=BASE_URL) as c:
        yield c


def test_past_the_pending_bound_an_export_gets_503_with_retry_after_and_nothing_is_stored(
    store: Store, client: TestClient[Litestar], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    _, key = store.api_keys.create("ingest")
    headers = {"content-type": "application/x-protobuf", "authorization": f"Bearer {key}"}
    answers = [client.post("/v1/traces", content=otlp_body(recorded_spans(1)), headers=headers) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 503]
    assert answers[2].headers["retry-after"].isdigit()
    assert waiting(store, 10) == 2
    dump = dump_database(store)
    assert key not in dump and key_hash(key) in dump
    assert key not in caplog.text and key[4:] not in caplog.text


def test_exports_a_stopped_server_stored_are_assembled_when_it_starts_again(store: Store) -> None:
    for span in recorded_spans(1):  # answered 200 one by one, then the server died before any assembly
        store_batch(store, otlp_body([span]), "application/x-protobuf", key_pk=None)
    with TestClient(create_app(Settings(), store), base_url=BASE_URL):
        deadline = time.monotonic() + 20
        while waiting(store, 10):
            assert time.monotonic() < deadline, "the stored exports were not assembled after a start"
            time.sleep(0.05)
    assert [m.message.role for m in store.get_conversation("conv-0").messages] == ["system", "user", "user"]
