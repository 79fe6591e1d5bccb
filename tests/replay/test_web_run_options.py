"""The Re-run form's request options: sent over the recorded request as the CLI's flags are, checked against the
model table before anything is recorded, and shown on the run's page as the body carried them."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from core.store import Store
from tests.replay.replay_data import CONVERSATION
from tests.replay.web_server import replay_app, serving, settled
from tests.web.web_corpus import csrf_cookie
from tests.web.web_html import live_content, parse
from web.devtools.stub_provider import StubServer
from web.replays.service import RunService
from web.request_options import OPTIONS

RUNS = f"/conversations/{CONVERSATION}/runs"
HX = {"HX-Request": "true"}
MODEL = "claude-sonnet-4-5"
"""A model the table knows, with an output limit of 64,000."""


@pytest.fixture
def client(store: Store, stub_env: dict[str, str]) -> Iterator[httpx.Client]:
    service = RunService(store, environ=lambda: stub_env, timeout=1.5)
    with serving(replay_app(store, service)) as url, httpx.Client(base_url=url, timeout=10) as c:
        yield c


def _post(client: httpx.Client, fields: dict[str, str]) -> httpx.Response:
    html = client.get(f"/conversations/{CONVERSATION}").text
    key = re.search(r'name="idempotency_key" value="([^"]+)"', html)
    assert key is not None
    form = {"_csrf_token": csrf_cookie(client.cookies), "idempotency_key": key.group(1), "provider": "anthropic"}
    return client.post(RUNS, data={**form, "model": MODEL, **fields}, headers={"Origin": str(client.base_url), **HX})


def test_the_rerun_form_has_a_field_per_option(client: httpx.Client) -> None:
    page = parse(client.get(f"/conversations/{CONVERSATION}").text)
    names = {el.get("name") for el in page.elements if el.tag in ("input", "select", "textarea")}
    assert {spec.name for spec in OPTIONS} <= names


def test_options_go_into_the_sent_body_and_the_run_page_says_so(
    client: httpx.Client, stub: StubServer, store: Store
) -> None:
    started = _post(client, {"max_tokens": "321", "temperature": "0.25", "stop": "END", "tools_source": "inferred"})
    assert started.status_code == 200, started.text
    run_id = re.search(r'data-run="([0-9a-f]{32})"', started.text)
    assert run_id is not None
    html = settled(client, f"/runs/{run_id.group(1)}")
    (seen,) = stub.state.requests
    assert seen.body["max_tokens"] == 321 and seen.body["temperature"] == 0.25
    assert seen.body["stop_sequences"] == ["END"] and [t["name"] for t in seen.body["tools"]] == ["weather"]
    assert store.get_run(run_id.group(1)).request_body["max_tokens"] == 321
    sent = dict(re.findall(r'data-sent="([^"]+)">[^ ]+ ([^<]+)</code>', html))
    assert sent["max_tokens"] == "321" and sent["temperature"] == "0.25"
    assert live_content(html) == []


def test_max_tokens_above_the_models_limit_is_refused_in_place_and_nothing_is_recorded(
    client: httpx.Client, stub: StubServer, store: Store
) -> None:
    before = len(store.list_run_summaries(CONVERSATION, limit=100))
    refused = _post(client, {"max_tokens": "999999", "temperature": "7"})
    assert refused.status_code == 200
    text = refused.text
    assert "max tokens: 999,999 is above 64,000, the output limit of claude-sonnet-4-5" in text
    assert "temperature: 7 is out of range (0 to 2)" in text
    assert len(store.list_run_summaries(CONVERSATION, limit=100)) == before
    assert stub.state.requests == []


def test_inferred_tools_and_a_tool_list_together_are_refused(client: httpx.Client, store: Store) -> None:
    tools = '[{"name": "lookup", "parameters": {"type": "object"}}]'
    refused = _post(client, {"tools_source": "inferred", "tools": tools})
    assert "tools sent: inferred with a tool list given" in refused.text


def test_no_tools_for_a_history_with_tool_calls_is_refused_by_preflight_not_sent(
    client: httpx.Client, stub: StubServer
) -> None:
    started = _post(client, {"tools_source": "none"})
    run_id = re.search(r'data-run="([0-9a-f]{32})"', started.text)
    assert run_id is not None
    assert "preflight rule tool-blocks-need-tools" in settled(client, f"/runs/{run_id.group(1)}")
    assert stub.state.requests == []
