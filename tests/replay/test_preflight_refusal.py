"""Replay refuses a body that fails preflight: no provider call, a ``refused`` run naming the rule; --force sends it.

Built bodies pass preflight (tests/preflight), so the failing body here comes from an adapter bug, simulated:
the tool message is sent before the assistant turn that made the call, which OpenAI answers with a 400.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.providers import get_dialect
from core.providers.base import JSON
from core.replay.run import replay
from core.store import Store
from tests.replay.replay_data import CONVERSATION, seed_store
from tests.replay.test_web_runs import HX, _form, _post, _run_id, _wait
from tests.replay.web_server import replay_app, serving
from web.cli import main
from web.devtools.stub_provider import Reply, StubServer
from web.runs.service import RunService


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(str(tmp_path / "replay.db")) as opened:
        seed_store(opened, tmp_path)
        yield opened


@pytest.fixture
def result_before_call(monkeypatch: pytest.MonkeyPatch) -> None:
    dialect = get_dialect("openai")
    assemble = type(dialect).assemble

    def misplaced(self: Any, params: JSON, fragments: JSON, ctx: Any) -> JSON:
        body = assemble(self, params, fragments, ctx)
        msgs = body["messages"]
        call = next(i for i, m in enumerate(msgs) if m.get("tool_calls"))
        msgs[call], msgs[call + 1] = msgs[call + 1], msgs[call]
        return body

    monkeypatch.setattr(type(dialect), "assemble", misplaced)


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
    stub.state.script.append(Reply(text="sent"))
    run = replay(store, CONVERSATION, "openai", "gpt-4.1", environ=stub_env, timeout=10, force=True)
    assert len(stub.state.requests) == 1 and run.status == "ok"


@pytest.fixture
def cli_env(stub_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in stub_env.items():
        monkeypatch.setenv(name, value)


@pytest.mark.usefixtures("result_before_call", "cli_env")
def test_cli_refuses_with_the_rule_and_force_sends(
    store: Store, stub: StubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["replay", "--db", str(tmp_path / "replay.db"), "--conversation", CONVERSATION, "--provider", "openai"]
    assert main([*argv, "--model", "gpt-4.1"]) == 3
    err = capsys.readouterr().err
    assert "(refused)" in err and "preflight rule result-before-call" in err and "--force" in err
    assert stub.state.requests == []
    stub.state.script.append(Reply(text="Sunny."))
    assert main([*argv, "--model", "gpt-4.1", "--force"]) == 0
    assert len(stub.state.requests) == 1


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
