"""Replay refuses a body that fails preflight: no provider call, a ``refused`` run naming the rule; --force sends it.

Built bodies pass preflight (tests/preflight), so the failing body here comes from an adapter bug, simulated:
the tool message is sent before the assistant turn that made the call, which OpenAI answers with a 400.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from core.replay.run import replay
from core.store import Store
from tests.replay.replay_data import CONVERSATION
from tests.replay.test_web_runs import HX, _form, _post, _run_id, _wait
from tests.replay.web_server import replay_app, serving
from web.devtools.stub_provider import Reply, StubServer
from web.replays.service import RunService


@pytest.mark.usefixtures("result_before_call")
def test_a_body_that_fails_preflight_is_not_sent_and_the_run_is_refused_naming_the_rule(
    store: Store, stub: StubServer, stub_env: dict[str, str]
) -> None:
    run = replay(store, CONVERSATION, "openai", "gpt-4.1", environ=stub_env, timeout=10)
    assert stub.state.requests == []
    assert run.status == "refused"
    assert run.error is not None and "result-before-call" in run.error and "t-1" in run.error
    assert store.get_run(run.run_id).status == "refused"
    assert run.request_body["messages"][2]["role"] == "tool"  # the body that was not sent is kept for review


@pytest.mark.usefixtures("result_before_call")
def test_force_sends_it_anyway(store: Store, stub: StubServer, stub_env: dict[str, str]) -> None:
    """Sent as built, the provider refuses it as preflight said it would (the stub answers as OpenAI does)."""
    stub.state.script.append(Reply(text="sent"))
    run = replay(store, CONVERSATION, "openai", "gpt-4.1", environ=stub_env, timeout=10, force=True)
    assert len(stub.state.requests) == 1 and run.status == "http_error"
    assert "must be a response to a preceeding message with 'tool_calls'" in (run.error or "")


@pytest.fixture
def client(store: Store, stub_env: dict[str, str]) -> Iterator[httpx.Client]:
    service = RunService(store, environ=lambda: stub_env, timeout=1.5)
    with serving(replay_app(store, service)) as url, httpx.Client(base_url=url, timeout=10) as c:
        yield c


@pytest.mark.usefixtures("result_before_call")
def test_dashboard_rerun_is_refused_without_a_provider_call(client: httpx.Client, stub: StubServer) -> None:
    response = _post(client, {**_form(client), "provider": "openai", "model": "gpt-4.1"}, HX)
    html = _wait(client, _run_id(response.text))
    assert 'data-run-status="refused"' in html and "result-before-call" in html
    assert stub.state.requests == []
