"""A conversation sent live over OTLP: in the list, marked live, while its spans still arrive, and its timeline
grows in place (htmx polling) as the next spans come, without a reload."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core.store import Store
from tests.ingest.genai_spans import otlp_body, record, tracer_provider
from tests.replay.web_server import serving
from tests.web.test_browser import _shot, browser  # noqa: F401 - a fixture
from web.app import create_app
from web.settings import Settings

pytestmark = pytest.mark.browser

CONVERSATION = "conv-900"
SPANS_PER_TURN = 3
"""A turn's spans: the call that asks for the tool, the tool's run, the call that answers."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Store]]:
    """A dashboard over SQLite with the job queue in process, and an ingest key for it."""
    with Store.open(str(tmp_path_factory.mktemp("live") / "live.db")) as store:
        key = store.api_keys.create("ingest", "browser")[1]
        with serving(create_app(Settings(), store)) as base:
            yield base, key, store


def _send(base: str, key: str, body: bytes) -> None:
    headers = {"content-type": "application/x-protobuf", "authorization": f"Bearer {key}"}
    assert httpx.post(f"{base}/v1/traces", content=body, headers=headers, timeout=30).status_code == 200


def _assembled(store: Store, records: int) -> None:
    """Until the conversation holds ``records`` trace records (the assembly job runs off the request)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            if store.get_summary(CONVERSATION).records >= records:
                return
        except LookupError:
            pass
        assert time.monotonic() < deadline, f"{CONVERSATION} was not assembled"
        time.sleep(0.05)


def test_a_live_conversation_is_listed_while_it_arrives_and_its_timeline_grows_in_place(
    browser: object,  # noqa: F811 - the fixture imported above
    server: tuple[str, str, Store],
) -> None:
    base, key, store = server
    memory = InMemorySpanExporter()
    provider = tracer_provider(memory)
    record(provider, 1, turns=2, offset=900)
    provider.shutdown()
    spans = list(memory.get_finished_spans())  # in the order they ended: turn 0, turn 1, the agent's span
    _send(base, key, otlp_body(spans[:SPANS_PER_TURN]))
    _assembled(store, 1)

    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    try:
        pg = context.new_page()
        pg.goto(base + "/")
        row = pg.wait_for_selector(f'[data-conversation-id="{CONVERSATION}"]')
        assert row.query_selector("[data-live]") is not None
        row.query_selector("a").click()
        pg.wait_for_selector("#timeline[data-live-timeline] article[data-msg-id]")
        loads: list[str] = []
        pg.on("load", lambda _: loads.append(pg.url))
        cards = pg.locator("#timeline article[data-msg-id]")
        before = cards.count()
        assert "sunny in city 1" not in pg.inner_text("#timeline")

        _send(base, key, otlp_body(spans[SPANS_PER_TURN:]))
        cards.nth(before).wait_for(timeout=9000)  # a card past the first ones: the poll brought the next turn
        pg.get_by_text("It is sunny in city 1.").wait_for(timeout=9000)
        assert cards.count() > before and loads == []
        _shot(pg, "ingest-live-timeline-grew.png")
    finally:
        context.close()
