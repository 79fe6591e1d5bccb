"""A replay records who started it: the signed-in account (or a key's), shown on its page and in its JSON."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from core.store import Store
from tests.replay.replay_data import CONVERSATION
from tests.replay.web_server import replay_app, serving, settled
from tests.web.accounts_data import add_accounts
from tests.web.web_corpus import csrf_cookie
from web.devtools.stub_provider import StubServer
from web.replays.service import RunService

RUNS = f"/conversations/{CONVERSATION}/runs"


@pytest.fixture
def base(store: Store, stub: StubServer, stub_env: dict[str, str]) -> Iterator[str]:
    with serving(replay_app(store, RunService(store, environ=lambda: stub_env, timeout=2))) as url:
        yield url


def _form_key(client: httpx.Client) -> str:
    found = re.search(r'name="idempotency_key" value="([^"]+)"', client.get(f"/conversations/{CONVERSATION}").text)
    assert found is not None
    return found.group(1)


def _start(client: httpx.Client, fields: dict[str, str], headers: dict[str, str]) -> str:
    """Start a replay on the stub; the started run's id (from the redirect to its page)."""
    form = {"provider": "openai", "model_as_typed": "1", "model": "m", **fields}
    response = client.post(RUNS, data=form, headers=headers, follow_redirects=False)
    assert response.status_code == 303, response.text[:300]
    return response.headers["location"].rsplit("/", 1)[-1]


def test_a_replay_started_with_a_write_key_records_the_keys_account(store: Store, base: str) -> None:
    add_accounts(store)
    _, key = store.api_keys.create("write", "ci", user="reviewer")
    bearer = {"authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, timeout=10, headers=bearer) as client:
        # No CSRF token and no cookie: a key cannot be sent by another site's page.
        run_id = _start(client, {"idempotency_key": _form_key(client)}, bearer)
        assert client.get(f"/api/runs/{run_id}").json()["started_by"] == "reviewer"
        html = settled(client, f"/runs/{run_id}")
        assert re.search(r"data-started-by>by reviewer<", html)


def test_a_replay_on_an_open_dashboard_records_nobody(base: str) -> None:
    with httpx.Client(base_url=base, timeout=10) as client:
        key = _form_key(client)
        fields = {"idempotency_key": key, "_csrf_token": csrf_cookie(client.cookies)}
        run_id = _start(client, fields, {"Origin": str(client.base_url)})
        assert client.get(f"/api/runs/{run_id}").json()["started_by"] is None
        assert "data-started-by" not in settled(client, f"/runs/{run_id}")
