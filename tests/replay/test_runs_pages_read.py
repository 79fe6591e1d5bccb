"""The replays and run-compare pages read the conversation's summary and the runs' rows, never its messages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import event

from core.store import NewRun, Store
from tests.replay.replay_data import CONVERSATION
from tests.web.web_corpus import BASE_URL
from web.app import create_app
from web.replays.service import RunService
from web.settings import Settings


@pytest.fixture
def client(store: Store) -> Iterator[TestClient[Litestar]]:
    app = create_app(Settings(), store, runs=RunService(store, environ=dict))
    with TestClient(app, base_url=BASE_URL) as c:
        yield c


@pytest.fixture
def statements(store: Store) -> Iterator[list[str]]:
    """Every SQL statement the store runs while the test requests pages."""
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    event.listen(store.engine, "before_cursor_execute", record)
    yield seen
    event.remove(store.engine, "before_cursor_execute", record)


def _reads_messages(statements: list[str]) -> list[str]:
    tables = (" messages", "message_outlines", "message_texts")
    return [s for s in statements if any(t in s.lower() for t in tables)]


def test_the_replays_page_reads_no_message(client: TestClient[Litestar], store: Store, statements: list[str]) -> None:
    run = store.start_run(NewRun(CONVERSATION, "openai", "m", {"messages": []}))
    statements.clear()
    page = client.get(f"/conversations/{CONVERSATION}/replays")
    assert page.status_code == 200 and run.run_id in page.text
    assert _reads_messages(statements) == []
    assert "request_body" not in " ".join(statements)  # a replay of a long trace sends megabytes


def test_the_replays_page_of_an_unknown_conversation_is_a_404_without_reading_messages(
    client: TestClient[Litestar], statements: list[str]
) -> None:
    assert client.get("/conversations/nope/replays").status_code == 404
    assert _reads_messages(statements) == []


def test_the_compare_page_reads_no_message(client: TestClient[Litestar], store: Store, statements: list[str]) -> None:
    a = store.start_run(NewRun(CONVERSATION, "openai", "m", {"messages": [1]}))
    b = store.start_run(NewRun(CONVERSATION, "gemini", "m", {"contents": [2]}))
    for run in (a, b):
        store.finish_run(run.run_id, status="ok", reply={"role": "assistant", "content": "hi", "msg_type": "text"})
    statements.clear()
    page = client.get("/runs/compare", params={"a": a.run_id, "b": b.run_id})
    assert page.status_code == 200 and "data-request-diff-pending" in page.text
    assert _reads_messages(statements) == []
    assert "request_body" not in " ".join(statements)  # the bodies are the deferred part's to read
    requests = client.get("/runs/compare/requests", params={"a": a.run_id, "b": b.run_id})
    assert requests.status_code == 200 and "data-request-diff" in requests.text
    assert client.get("/runs/compare", params={"a": a.run_id, "b": "nope"}).status_code == 404
