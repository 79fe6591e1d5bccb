"""``traceloupe replay``: the reply on stdout, one line on stderr, an exit code per outcome, and the run recorded
where ``runs`` lists it."""

from __future__ import annotations

import json
import re

import pytest

from core.store import Store
from tests.replay.conftest import CANARY_KEY
from tests.replay.replay_data import CONVERSATION
from tests.replay.steps_data import STEPS_CONVERSATION
from web.cli import main
from web.devtools.stub_provider import Reply, StubServer


def _cli(db: str, *args: str) -> list[str]:
    return ["replay", "--db", db, "--conversation", CONVERSATION, *args]


@pytest.mark.usefixtures("cli_env")
def test_cli_success_prints_the_reply_and_records_the_run(
    replay_db: str, stub: StubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.state.script.append(Reply(text="Sunny and 22."))
    assert main(_cli(replay_db, "--provider", "anthropic", "--model", "claude-x", "--timeout", "10")) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "Sunny and 22."
    assert re.match(r"run [0-9a-f]{32} ok \(anthropic claude-x, \d+ ms, \d+ tokens\)", err)
    assert main(["runs", "--db", replay_db]) == 0
    listing = capsys.readouterr().out
    assert "anthropic" in listing and "claude-x" in listing and " ok " in listing
    assert CANARY_KEY not in out + err + listing


@pytest.mark.parametrize(
    ("model", "status", "words"),
    [("stub-error-500", "http_error", "HTTP 500"), ("stub-error-429", "rate_limited", "retry after 1 s"),
     ("stub-slow-3", "timeout", "time limit")],
)  # fmt: skip
@pytest.mark.usefixtures("cli_env", "stub")
def test_cli_failure_is_one_line_exit_3_and_recorded(
    model: str, status: str, words: str, replay_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_cli(replay_db, "--provider", "openai", "--model", model, "--timeout", "1")) == 3
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert f"({status})" in err and words in err
    assert main(["runs", "--db", replay_db]) == 0
    listing = capsys.readouterr().out
    assert status in listing and words in listing  # `runs` shows the outcome and why


def test_cli_without_key_names_the_variable_and_records_nothing(
    replay_store: Store, replay_db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    assert main(_cli(replay_db, "--provider", "gemini", "--model", "g")) == 1
    err = capsys.readouterr().err
    assert "set GEMINI_API_KEY" in err and len(err.strip().splitlines()) == 1
    assert replay_store.list_runs() == ((), None)


@pytest.mark.usefixtures("cli_env")
def test_cli_with_a_one_letter_key_says_so_in_one_line(
    replay_store: Store,
    replay_db: str,
    stub: StubServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    assert main(_cli(replay_db, "--provider", "openai", "--model", "gpt-4.1")) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "OPENAI_API_KEY" in err and "Traceback" not in err
    assert stub.state.requests == [] and replay_store.list_runs() == ((), None)


@pytest.mark.parametrize("upto", ["u-1", "t-1", "s"])
@pytest.mark.usefixtures("cli_env")
def test_upto_a_message_that_is_not_an_assistants_is_refused_in_one_line(
    upto: str, replay_store: Store, replay_db: str, stub: StubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_cli(replay_db, "--provider", "openai", "--model", "m", "--upto", upto)) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert f"'{upto}' is a" in err and "only assistant messages can be regenerated" in err
    assert stub.state.requests == [] and replay_store.list_runs() == ((), None)


@pytest.mark.usefixtures("result_before_call", "cli_env")
def test_cli_refuses_with_the_rule_and_force_sends(
    replay_db: str, stub: StubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _cli(replay_db, "--provider", "openai")
    assert main([*argv, "--model", "gpt-4.1"]) == 3
    err = capsys.readouterr().err
    assert "(refused)" in err and "preflight rule result-before-call" in err and "--force" in err
    assert stub.state.requests == []
    stub.state.script.append(Reply(text="Sunny."))
    # Sent anyway, the provider refuses it as preflight said it would (the stub answers as OpenAI does).
    assert main([*argv, "--model", "gpt-4.1", "--force"]) != 0
    assert len(stub.state.requests) == 1
    assert "must be a response to a preceeding message with 'tool_calls'" in capsys.readouterr().err


@pytest.mark.usefixtures("cli_env")
def test_a_reply_run_shows_its_cost_in_the_cli_and_in_runs_json(
    steps_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["replay", "--db", steps_db, "--conversation", STEPS_CONVERSATION, "--provider", "anthropic"]
    assert main([*argv, "--model", "claude-sonnet-4-20250514"]) == 0
    assert main([*argv, "--model", "house-model"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"\) cost \$0\.0\d+", err) and "cost unknown (genai-prices has no price for model" in err
    assert main(["runs", "--db", steps_db, "--json"]) == 0
    runs = {r["model"]: r for r in json.loads(capsys.readouterr().out)}
    assert runs["claude-sonnet-4-20250514"]["cost_usd"] > 0
    assert runs["house-model"]["cost_usd"] is None and "house-model" in runs["house-model"]["cost_note"]
