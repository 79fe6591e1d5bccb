"""``traceloupe demo`` and its data set: every kind, the incident, the long trace, the hostile content, the stub, and
step runs of its own (its agent turn replayed over the stub, one matched and one diverged)."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER
from core.integrity import find_damage
from core.providers import all_providers, get_dialect
from core.replay.endpoints import endpoint_for
from tests.web.web_html import live_content, parse
from web.cli import main
from web.cli.demo import PLACEHOLDER_KEY
from web.devtools import demo_data
from web.timeline import CARD_KINDS, Timeline


@pytest.fixture
def real_keys_in_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real key for every provider in the environment, which the demo must not use: it points them at its stub."""
    for spec in all_providers():
        monkeypatch.setenv(spec.key_var, "sk-real-key-must-not-be-used")
        monkeypatch.delenv(spec.base_url_var, raising=False)


def test_every_card_kind_is_in_the_demo() -> None:
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.every_kind()]
    cards = Timeline(messages).page(0, 1000).cards
    assert {c.kind for c in cards} == set(CARD_KINDS)
    assert not any(c.damage for c in cards)


def test_incident_long_trace_and_hostile_content() -> None:
    incident = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.incident()]
    damaged = [d.msg_id for m in incident for d in find_damage(m)]
    assert damaged == ["inc-a1", "inc-a2", "inc-u-fwd"]  # written by the pre-fix schema: msg_type lost
    (long,) = demo_data.long_trace()
    assert len(long["intermediate_trace"]["records"]) == 2000
    hostile = json.dumps(demo_data.hostile())
    for needle in ("<script>", "onerror=", "javascript:", "JaVaScRiPt:", demo_data.FAKE_KEY, "hx-post"):
        assert needle in hostile
    assert max(len(r["tool_reses"][0]["result"]) for r in demo_data.hostile()[0]["intermediate_trace"]["records"]
               if r["role"] == "tool") > 1_000_000  # fmt: skip


@pytest.mark.usefixtures("real_keys_in_the_shell")
def test_demo_builds_serves_and_points_replays_at_the_stub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict[str, Any] = {}

    def fake_run(app: Any, sock: Any, **kwargs: Any) -> None:
        seen.update(kwargs)
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            home = client.get("/")
            seen["rows"] = [
                el.get("data-conversation-id") for el in parse(home.text).elements if el.has("data-conversation-id")
            ]
            hostile = client.get(f"/conversations/{demo_data.HOSTILE}")
            seen["hostile"] = (hostile.status_code, live_content(hostile.text), len(hostile.content))
            seen["image"] = client.get("/attachments/photos/tram.png?inline=1").status_code
        endpoint = endpoint_for(get_dialect("openai"))
        assert endpoint is not None
        seen["endpoint"] = endpoint
        request = urllib.request.Request(
            f"{endpoint.base_url}/chat/completions",
            data=json.dumps({"model": "demo", "messages": [{"role": "user", "content": "hi"}]}).encode(),
            headers={"content-type": "application/json", "authorization": f"Bearer {endpoint.key}"},
        )
        with urllib.request.urlopen(request) as response:  # the stub on loopback
            seen["reply"] = json.loads(response.read())

    monkeypatch.setattr("web.cli.serve.run_server", fake_run)
    db = tmp_path / "traceloupe-demo.db"
    assert main(["demo", "--db", str(db), "--port", "0"]) == 0
    assert db.exists() and (tmp_path / "traceloupe-demo-attachments" / "photos" / "tram.png").exists()
    assert seen["host"] == "127.0.0.1" and seen["port"] > 0
    assert {demo_data.EVERY_KIND, demo_data.INCIDENT, demo_data.LONG, demo_data.HOSTILE} <= set(seen["rows"])
    status, problems, size = seen["hostile"]
    assert status == 200 and problems == [] and size < 1_000_000  # the 2 MB field is cut
    assert seen["image"] == 200
    assert seen["endpoint"].key == PLACEHOLDER_KEY and seen["endpoint"].base_url.startswith("http://127.0.0.1:")
    assert seen["reply"]["choices"][0]["message"]["content"] == "This is the stub provider's reply."
    err = capsys.readouterr().err
    assert "Traceloupe demo on http://127.0.0.1:" in err and "sk-real-key" not in err
    assert main(["demo", "--db", str(db), "--port", "0"]) == 0  # a kept demo database is reused as it is


def test_runs_are_read_only_data_on_the_list_and_the_api(tmp_path: Path) -> None:
    from core.store import Store
    from web.app import create_app
    from web.settings import Settings

    demo = demo_data.build(tmp_path, long_records=20)
    with Store.open(str(demo.db)) as store, TestClient(create_app(Settings(), store), base_url="http://127.0.0.1") as c:
        runs = c.get("/api/runs").json()
        assert sorted(r["status"] for r in runs["runs"]) == ["http_error", "ok"]
        assert "request_body" not in runs["runs"][0]
        assert "request_body" in c.get("/api/runs?bodies=1").json()["runs"][0]
        mine = c.get(f"/api/conversations/{demo_data.EVERY_KIND}/runs").json()["runs"]
        assert [(r["provider"], r["status"], r["usage"]["total_tokens"]) for r in mine] == [("openai", "ok", 16)]
        assert c.get("/api/conversations/nope/runs").status_code == 404
        with_runs = parse(c.get("/?runs=1").text)
        rows = [el.get("data-conversation-id") for el in with_runs.elements if el.has("data-conversation-id")]
        assert sorted(rows) == sorted([demo_data.EVERY_KIND, demo_data.INCIDENT])
        assert c.post("/api/runs").status_code in (403, 405)  # nothing here creates a run


def test_a_seeded_run_whose_response_holds_a_reply_shows_it(tmp_path: Path) -> None:
    from core.store import Store
    from web.app import create_app
    from web.settings import Settings

    demo = demo_data.build(tmp_path, long_records=20)
    with Store.open(str(demo.db)) as store, TestClient(create_app(Settings(), store), base_url="http://127.0.0.1") as c:
        for run in c.get("/api/runs?bodies=1").json()["runs"]:
            page = c.get(f"/runs/{run['run_id']}").text
            if run["status"] == "ok":
                assert (
                    run["reply"]["content"]
                    == "A stub reply."
                    == run["response_body"]["choices"][0]["message"]["content"]
                )
                assert "No reply." not in page and "A stub reply." in page
            else:
                assert run["reply"] is None and run["error"] in page


@pytest.mark.usefixtures("real_keys_in_the_shell")
def test_the_demo_records_a_matched_and_a_diverged_step_run_over_its_stub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo_data, "conversations", lambda long_records=2000: _small())
    seen: dict[str, Any] = {}

    def fake_run(app: Any, sock: Any, **kwargs: Any) -> None:
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            replays = client.get(f"/conversations/{demo_data.AGENT_STEPS}/replays").text
            seen["replays"] = replays
            ids = re.findall(r'data-step-run-row="(\w+)"', replays)
            seen["json"] = [client.get(f"/api/step-runs/{i}").json() for i in ids]
            seen["pages"] = [client.get(f"/step-runs/{i}").text for i in ids]

    monkeypatch.setattr("web.cli.serve.run_server", fake_run)
    db = tmp_path / "demo.db"
    assert main(["demo", "--db", str(db), "--port", "0"]) == 0
    by_status = {r["status"]: r for r in seen["json"]}
    assert sorted(by_status) == ["diverged", "matched"]
    matched, diverged = by_status["matched"], by_status["diverged"]
    assert [s["verdict"] for s in matched["steps"]] == ["same", "same", "same", "same_final"]
    assert (diverged["diverged_at"], diverged["reason"]) == ("ag-a2", "different_arguments")
    # The agent stored the tools it offered: both runs sent them, as a real model would have been offered them.
    assert {(r["tools_source"], tuple(t["name"] for t in r["tools"]), r["tool_choice"]) for r in seen["json"]} == {
        ("stored", ("lookup_order", "refund", "send_email"), "auto")
    }
    assert all(s["tokens"]["input"] for r in seen["json"] for s in r["steps"])  # the stub's usage, through the SDK
    assert all(live_content(p) == [] for p in seen["pages"])
    assert "data-step-compare-form" in seen["replays"]
    assert main(["demo", "--db", str(db), "--port", "0"]) == 0  # a kept demo database keeps its two runs
    assert len(seen["json"]) == 2


def _small() -> list[dict[str, Any]]:
    return demo_data.every_kind() + demo_data.incident() + demo_data.agent_steps()


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_every_agent_turn_of_the_demo_matches_on_a_default_model_and_diverges_on_the_other_every_time(
    tmp_path: Path, provider: str
) -> None:
    from core.providers import get_dialect
    from core.replay.steps import replay_steps
    from core.store import Store
    from web.cli.demo import point_providers_at
    from web.devtools.demo_steps import DIVERGING_MODEL, script_turns
    from web.devtools.stub_provider import StubServer

    demo = demo_data.build(tmp_path, long_records=20)
    stub = StubServer(0).start()
    try:
        environ = point_providers_at(stub.base_url, {})
        with Store.open(str(demo.db)) as store:
            scripted = script_turns(store, stub)
            turns = _agent_turns(store)
            assert scripted == len(turns) >= 3 and (demo_data.AGENT_STEPS, demo_data.AGENT_TURN) in turns
            for conversation, turn in turns:
                for _ in range(2):  # the same again: nothing in the script is used up
                    model = get_dialect(provider).default_model
                    run = replay_steps(store, conversation, provider, model, turn=turn, environ=environ)
                    assert run.status == "matched", (conversation, turn, run.reason, run.error)
                    run = replay_steps(store, conversation, "openai", DIVERGING_MODEL, turn=turn, environ=environ)
                    assert (run.status, run.reason) == ("diverged", "different_arguments"), (conversation, turn)
    finally:
        stub.shutdown()
        stub.server_close()


def _agent_turns(store: Any) -> list[tuple[str, str]]:
    """(conversation, user msg_id) of every turn whose recorded steps call a tool, undamaged."""
    from core.errors import MisuseError
    from core.replay.turns import has_trace, turn_of

    found = []
    for summary in store.iter_conversations():
        messages = [m.message for m in store.get_conversation(summary.conversation_id).messages]
        for user in filter(has_trace, messages):
            try:
                turn = turn_of(messages, user.msg_id)
            except MisuseError:
                continue
            if not turn.damage and any(s.message.tool_calls for s in turn.steps):
                found.append((summary.conversation_id, user.msg_id))
    return found


def test_the_demo_stores_its_agents_tools_but_one_whose_step_run_says_they_were_inferred(tmp_path: Path) -> None:
    from core.store import Store
    from web.cli.demo import point_providers_at
    from web.devtools.demo_steps import seed_step_runs
    from web.devtools.demo_tools import WITHOUT_TOOLS
    from web.devtools.stub_provider import StubServer

    demo = demo_data.build(tmp_path, long_records=20)
    stub = StubServer(0).start()
    try:
        with Store.open(str(demo.db)) as store:
            agent = store.request_context(demo_data.AGENT_STEPS, demo_data.AGENT_TURN)
            assert agent is not None and [t.name for t in agent.tools] == ["lookup_order", "refund", "send_email"]
            assert store.request_context(WITHOUT_TOOLS) is None
            matched, diverged, inferred = seed_step_runs(store, stub, point_providers_at(stub.base_url, {}))
            assert (matched.status, matched.tools_source, diverged.tools_source) == ("matched", "stored", "stored")
            assert (inferred.conversation_id, inferred.status) == (WITHOUT_TOOLS, "matched")
            assert (inferred.tools_source, inferred.tool_names) == ("inferred", ["lookup_invoice"])
    finally:
        stub.shutdown()
        stub.server_close()


def test_demo_with_allow_remote_is_refused_before_it_builds_saying_what_to_do(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["demo", "--host", "0.0.0.0", "--allow-remote"]) == 2
    err = capsys.readouterr().err
    assert "database is temporary" in err and "traceloupe serve --db FILE --allow-remote" in err
    assert "stub provider on" not in err  # nothing was started
