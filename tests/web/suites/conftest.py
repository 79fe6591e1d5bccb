"""A dashboard over suite conversations (each with a marker the stub can be scripted on), served on loopback."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.store import Store
from tests.replay.conftest import CANARY_KEY
from tests.replay.web_server import replay_app, serving
from tests.suites import suite_data
from tests.web.web_corpus import csrf_cookie
from web.devtools.stub_provider import StubServer
from web.replays.service import RunService

COUNT = 6
HOSTILE_TITLES = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    '<div hx-get="/suites" hx-trigger="load">x</div>',
)
"""User texts of extra conversations (their titles): each still holds a marker, so a suite can hold them."""
HOSTILE_FIRST = 50
HX = {"HX-Request": "true"}


def hostile_id(i: int) -> str:
    return f"hostile-{i}"


def seed(store: Store, folder: Path) -> None:
    """``COUNT`` plain conversations, then one per hostile title (markers from ``HOSTILE_FIRST`` on, same shape)."""
    suite_data.seed(store, folder, COUNT)
    hostile = {HOSTILE_FIRST + n: (hostile_id(n), title) for n, title in enumerate(HOSTILE_TITLES)}
    add(store, folder / "hostile.jsonl", hostile)


def add(store: Store, path: Path, conversations: dict[int, tuple[str, str]]) -> None:
    """Import conversation ``i`` of suite_data as ``(id, text before its question)`` for each ``i``."""
    lines: list[str] = []
    for i, (cid, title) in conversations.items():
        for message in suite_data.messages(i):
            message["conversation_id"] = cid
            for record in message.get("intermediate_trace", {}).get("records", []):
                record["conversation_id"] = cid
            if message["role"] == "user":
                message["content"] = f"{title} What is the weather {suite_data.marker(i)}?"
            lines.append(json.dumps(message))
    path.write_text("\n".join(lines) + "\n")
    store.import_path(path)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(str(tmp_path / "suites-web.db")) as opened:
        seed(opened, tmp_path)
        yield opened


@pytest.fixture
def env(stub: StubServer) -> dict[str, str]:
    """OpenAI points at the stub; no other provider has a key."""
    return {"OPENAI_API_KEY": CANARY_KEY, "OPENAI_BASE_URL": f"{stub.base_url}/v1"}


@pytest.fixture
def base(store: Store, env: dict[str, str]) -> Iterator[str]:
    service = RunService(store, workers=4, environ=lambda: env, timeout=5)
    with serving(replay_app(store, service)) as url:
        yield url


@pytest.fixture
def client(base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=10, headers={"Origin": base}) as c:
        yield c


def token(client: httpx.Client, path: str = "/") -> str:
    """The CSRF token (the cookie a page set)."""
    client.get(path)
    return csrf_cookie(client.cookies)


def form_key(html: str) -> str:
    found = re.search(r'name="idempotency_key" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


def save(client: httpx.Client, name: str, **filters: str) -> httpx.Response:
    """Post the list's save control as the page renders it for these filters."""
    return client.post("/suites", data={"_csrf_token": token(client), "name": name, **filters})


def start(client: httpx.Client, suite_path: str, **fields: Any) -> httpx.Response:
    """Post the suite's Run form (its key unless one is given): openai, gpt-4o, final mode."""
    html = client.get(suite_path).text
    data = {"_csrf_token": csrf_cookie(client.cookies), "idempotency_key": form_key(html), "provider": "openai",
            "model": "gpt-4o", "mode": "final", "concurrency": "4", **fields}  # fmt: skip
    return client.post(f"{suite_path}/runs", data=data)


def wait(client: httpx.Client, run_path: str, timeout: float = 20) -> str:
    """Poll the live region as htmx does until the run is finished; the final fragment (which polls no more)."""
    deadline = time.monotonic() + timeout
    while True:
        html = client.get(run_path, headers=HX).text
        if 'data-suite-run-status="finished"' in html:
            assert not re.search(r"<section[^>]*hx-trigger", html)
            return html
        assert time.monotonic() < deadline, "the suite run did not finish"
        time.sleep(0.1)
