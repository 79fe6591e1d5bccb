"""Heavy routes under a time budget, a concurrency limit and client-disconnect cancellation.

The attack: any web page can make a visitor's browser request a build that costs the server
minutes of CPU, and keep it going after the client left. The slow build here spins in pure
Python (as a quadratic build would) and notes whether it was stopped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.web.web_corpus import BASE_URL, csrf_cookie, drive, make_app
from web.bodies.builder import PayloadBuilder
from web.heavy import WorkStopped

SPIN_SECONDS = 15.0  # long enough that a build nobody stops fails every test below


class SlowBuild:
    """Patches the payload builder to spin until stopped (or SPIN_SECONDS), recording what happened."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.finished = threading.Event()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.started.set()
        deadline = time.monotonic() + SPIN_SECONDS
        n = 0
        try:
            while time.monotonic() < deadline:
                n += 1
        except WorkStopped:
            self.stopped.set()
            raise
        finally:
            self.finished.set()
        raise AssertionError("the build was never stopped")


@pytest.fixture
def slow(monkeypatch: pytest.MonkeyPatch) -> SlowBuild:
    spin = SlowBuild()
    monkeypatch.setattr(PayloadBuilder, "_build", spin)
    return spin


@pytest.fixture
def budget_client() -> Iterator[TestClient[Litestar]]:
    with TestClient(make_app(heavy_budget_seconds=0.5), base_url=BASE_URL) as c:
        yield c


@pytest.mark.parametrize(
    ("path", "command"),
    [
        (
            "/conversations/c-long/payload/gemini",
            "traceloupe export --conversation c-long --no-runs"
            " | traceloupe payload - --conversation c-long --provider gemini",
        ),
        (
            "/conversations/c-long/payload/gemini/phases",
            "traceloupe payload - --conversation c-long --provider gemini --phases",
        ),
        (
            "/conversations/c-long/diff?left=openai&right=gemini",
            "traceloupe diff - --conversation c-long --left openai --right gemini",
        ),
    ],
)
def test_cpu_dos_build_past_budget_is_stopped_and_page_offers_cli(
    budget_client: TestClient[Litestar], slow: SlowBuild, path: str, command: str
) -> None:
    response = budget_client.get(path)
    assert response.status_code == 503
    assert "Stopped after 0.5 seconds" in response.text
    assert command in response.text.replace("&#39;", "'")
    assert "data-error-command" in response.text
    assert slow.stopped.wait(5), "the build went on after the budget"


def test_cpu_dos_api_build_past_budget_answers_json_with_command(
    budget_client: TestClient[Litestar], slow: SlowBuild
) -> None:
    response = budget_client.get("/api/conversations/c-long/payload/gemini")
    assert response.status_code == 503
    body = response.json()
    assert body["command"].endswith("traceloupe payload - --conversation c-long --provider gemini")
    assert slow.stopped.wait(5)


def test_cpu_dos_command_quotes_ids_from_the_trace() -> None:
    from web.bodies.requests import payload_command

    command = payload_command("x; rm -rf ~ $(id)", "openai", "m'1")
    assert "'x; rm -rf ~ $(id)'" in command
    assert "--upto 'm'\"'\"'1'" in command


async def _get_then_leave(app: Litestar, path: str, leave_after: float) -> int | None:
    """Drive the app as a browser that closes the tab ``leave_after`` seconds into the request."""
    asked = False

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await anyio.sleep(leave_after)
        return {"type": "http.disconnect"}

    return await drive(app, "GET", path, receive)


@pytest.mark.anyio
async def test_cpu_dos_build_stops_when_client_disconnects(slow: SlowBuild) -> None:
    app = make_app()  # the default budget is far longer than the test
    with anyio.fail_after(SPIN_SECONDS - 5):
        await _get_then_leave(app, "/conversations/c-long/payload/gemini", leave_after=0.3)
    assert slow.started.is_set()
    assert slow.stopped.wait(5), "the build went on after the client left"


@contextmanager
def _a_build_running(
    slow: SlowBuild, **settings: Any
) -> Iterator[tuple[TestClient[Litestar], threading.Thread, list[int]]]:
    """A client of an app with these settings while a payload build it asked for, from another thread, runs;
    that build's status code lands in the list."""
    with TestClient(make_app(**settings), base_url=BASE_URL) as client:
        first: list[int] = []
        worker = threading.Thread(
            target=lambda: first.append(client.get("/conversations/c-long/payload/gemini").status_code)
        )
        worker.start()
        assert slow.started.wait(5)
        yield client, worker, first


def test_a_build_past_the_limit_waits_for_a_free_slot(slow: SlowBuild) -> None:
    settings = {"heavy_concurrency": 1, "heavy_budget_seconds": 1, "heavy_queue_seconds": 10}
    with _a_build_running(slow, **settings) as (client, worker, first):
        # The diff waits for the stopped build's slot instead of being refused, then runs (its payload
        # builds spin too, so its own budget stops it: a 503 that says so, not "try again").
        second = client.get("/conversations/c-every/diff?left=openai&right=gemini")
        assert slow.stopped.is_set() and "Stopped after 1 seconds" in second.text and "try again" not in second.text
        worker.join(10)
        assert first == [503]  # stopped by its budget


def test_cpu_dos_concurrency_limit_refuses_extra_builds(slow: SlowBuild) -> None:
    settings = {"heavy_concurrency": 1, "heavy_budget_seconds": 3, "heavy_queue_seconds": 0.5}
    with _a_build_running(slow, **settings) as (client, worker, first):
        second = client.get("/conversations/c-every/diff?left=openai&right=gemini")
        assert second.status_code == 503
        assert second.headers["retry-after"]
        assert "try again" in second.text
        worker.join(10)
        assert first == [503]  # stopped by its budget
        # The slot comes back once the stopped build's thread has ended.
        assert slow.finished.wait(5)
        time.sleep(0.1)
        monkey_free = client.get("/conversations/c-every")
        assert monkey_free.status_code == 200


def test_cpu_dos_light_pages_are_not_limited(slow: SlowBuild) -> None:
    with _a_build_running(slow, heavy_concurrency=1, heavy_budget_seconds=2) as (client, worker, _):
        assert client.get("/").status_code == 200
        assert client.get("/conversations/c-every").status_code == 200
        worker.join(10)


def test_cpu_dos_import_past_budget_is_rolled_back_and_offers_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    """An import stopped by its budget stores nothing of the file it was reading."""
    import web.imports.controllers as imports

    real = imports.import_stream
    stopped = threading.Event()

    def slow_import(source: Any, stream: Any, filename: Any, limits: Any, *rest: Any) -> Any:
        try:
            deadline = time.monotonic() + SPIN_SECONDS
            while time.monotonic() < deadline:
                stream.read(0)  # where the reader would pull its next record
                time.sleep(0.01)
        except WorkStopped:
            stopped.set()
            raise
        return real(source, stream, filename, limits, *rest)

    monkeypatch.setattr(imports, "import_stream", slow_import)
    app = make_app(import_budget_seconds=0.5)
    jsonl = b'{"role": "user", "msg_type": "text", "content": "hi", "msg_id": "a", "conversation_id": "c-new"}\n'
    with TestClient(app, base_url=BASE_URL) as client:
        token = csrf_cookie(client.get("/import").cookies)
        response = client.post("/import", files={"files": ("new.jsonl", jsonl)}, data={"_csrf_token": token})
        assert response.status_code == 503
        assert "traceloupe import new.jsonl" in response.text
        assert stopped.wait(5)
        assert client.get("/conversations/c-new").status_code == 404


def test_heavy_settings_are_checked() -> None:
    from web.settings import Settings

    with pytest.raises(ValueError, match="heavy_concurrency"):
        Settings(heavy_concurrency=0)
    with pytest.raises(ValueError, match="positive"):
        Settings(heavy_budget_seconds=0)
