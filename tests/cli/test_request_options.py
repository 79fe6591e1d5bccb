"""``payload``, ``diff`` and ``replay`` take what a real request sets: ``--max-tokens``, ``--temperature``,
``--top-p``, ``--stop`` (repeatable) and ``--thinking``. Each reaches the request, wins over the stored request
context, and a value out of range is argparse's one line and exit 2, before any file or database is read.

Only some dialects write temperature, top_p and stop in their bodies yet; where none does, the options the
command builds (``web.cli.payload.request_options``) are what is checked."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.providers import RequestOptions
from tests.replay.steps_data import STEP_MSG_IDS, STEPS_CONVERSATION, identical_steps, script, steps_conversation
from web.cli import main, payload
from web.devtools.stub_provider import Reply, StubServer

STORED_PARAMS = {"max_tokens": 321, "temperature": 0.2, "top_p": 0.5, "stop": ["END"], "thinking": False}
FLAGS = ["--max-tokens", "2048", "--temperature", "0.9", "--top-p", "0.1", "--stop", "\n\n", "--stop", "Human:",
         "--thinking", "on"]  # fmt: skip


def _file(tmp_path: Path, params: dict[str, Any] | None = None) -> Path:
    context = {"traceloupe_request": {"conversation_id": STEPS_CONVERSATION, "params": params}}
    lines = [*steps_conversation(), *([context] if params is not None else [])]
    path = tmp_path / "agent.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def _options(path: Path, *flags: str, provider: str = "openai") -> RequestOptions:
    """The options ``payload`` builds its request with, for these flags."""
    parser = argparse.ArgumentParser()
    payload.register(parser)
    ns = parser.parse_args([str(path), "--provider", provider, *flags])
    trace = payload.load_conversation(ns.file, ns.conversation)
    return payload.request_options(ns, trace.context(ns.upto), provider)


def _body(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["payload", *argv, "--json"]) in (0, 4), capsys.readouterr().err
    body: dict[str, Any] = json.loads(capsys.readouterr().out)["body"]
    return body


def test_each_flag_fills_its_request_option(tmp_path: Path) -> None:
    options = _options(_file(tmp_path), *FLAGS)
    assert (options.max_tokens, options.temperature, options.top_p) == (2048, 0.9, 0.1)
    assert (options.stop, options.thinking) == (("\n\n", "Human:"), True)
    assert _options(_file(tmp_path), "--thinking", "off").thinking is False


def test_the_flags_override_the_stored_context_and_leave_the_rest(tmp_path: Path) -> None:
    path = _file(tmp_path, STORED_PARAMS)
    stored = _options(path)
    assert (stored.max_tokens, stored.temperature, stored.top_p, stored.stop, stored.thinking) == (
        321, 0.2, 0.5, ("END",), False
    )  # fmt: skip
    given = _options(path, *FLAGS)
    assert (given.max_tokens, given.temperature, given.top_p, given.stop, given.thinking) == (
        2048, 0.9, 0.1, ("\n\n", "Human:"), True
    )  # fmt: skip
    one = _options(path, "--temperature", "0")
    assert (one.temperature, one.max_tokens, one.stop) == (0.0, 321, ("END",))  # zero is a value, not "unset"


def test_max_tokens_and_thinking_reach_the_body_over_the_stored_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, STORED_PARAMS)
    first_step = ["--upto", STEP_MSG_IDS[0]]  # no earlier tool turn, which would have Anthropic thinking switched off
    stored = _body(capsys, str(path), "--provider", "anthropic", *first_step)
    assert stored["max_tokens"] == 321 and stored.get("thinking", {"type": "disabled"})["type"] == "disabled"
    body = _body(capsys, str(path), "--provider", "anthropic", *first_step, "--max-tokens", "4096", "--thinking", "on")
    assert body["max_tokens"] == 4096
    assert body["thinking"]["type"] in ("enabled", "adaptive")  # the model's own way of thinking
    assert _body(capsys, str(path), "--provider", "openai", "--max-tokens", "77")["max_completion_tokens"] == 77


def test_diff_builds_both_sides_with_the_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(_file(tmp_path, STORED_PARAMS))
    argv = ["diff", path, "--left", "anthropic", "--right", "anthropic", "--json"]
    assert main([*argv, "--max-tokens", "99"]) == 0  # both sides carry the same flags: no difference
    assert json.loads(capsys.readouterr().out)["changes"] == []
    assert main(["diff", path, "--left", "openai", "--right", "anthropic", "--max-tokens", "99", "--json"]) == 1
    changes = json.loads(capsys.readouterr().out)["changes"]
    values = {change["pointer"]: change for change in changes}
    assert values["/max_tokens"]["right"] == 99 and values["/max_completion_tokens"]["left"] == 99


BAD = [
    (["--temperature", "2.5"], "--temperature is a number between 0 and 2"),
    (["--temperature", "nan"], "--temperature is a number between 0 and 2"),
    (["--temperature", "warm"], "--temperature is a number between 0 and 2"),
    (["--top-p", "1.01"], "--top-p is a number between 0 and 1"),
    (["--top-p", "-0.1"], "--top-p is a number between 0 and 1"),
    (["--max-tokens", "0"], "--max-tokens is between 1 and"),
    (["--stop", ""], "--stop needs a non-empty sequence"),
    (["--stop", "x\x00"], "--stop contains a control character"),
    ([arg for i in range(17) for arg in ("--stop", f"s{i}")], "at most 16 stop sequences"),
    (["--thinking", "maybe"], "invalid choice: 'maybe'"),
]


def _commands(tmp_path: Path) -> list[list[str]]:
    missing = str(tmp_path / "never.jsonl")
    return [
        ["payload", missing, "--provider", "openai"],
        ["diff", missing, "--left", "openai", "--right", "anthropic"],
        ["replay", "--db", str(tmp_path / "never.db"), "--conversation", "c", "--provider", "openai", "--model", "m"],
        ["replay", "--db", str(tmp_path / "never.db"), "--conversation", "c", "--provider", "openai", "--model", "m",
         "--steps"],
    ]  # fmt: skip


@pytest.mark.parametrize(("flags", "words"), BAD)
def test_a_bad_value_is_one_line_and_exit_2_before_anything_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], words: str
) -> None:
    for command in _commands(tmp_path):
        assert main([*command, *flags]) == 2, command
        (line,) = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
        assert words in line, (command, line)
    assert not (tmp_path / "never.db").exists()


@pytest.mark.usefixtures("cli_env")
def test_replay_sends_the_flags(replay_db: str, stub: StubServer, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.replay.replay_data import CONVERSATION

    stub.state.script.append(Reply(text="Sunny."))
    argv = ["replay", "--db", replay_db, "--conversation", CONVERSATION, "--provider", "anthropic", "--model", "m"]
    assert main([*argv, "--max-tokens", "77", "--temperature", "0.3"]) == 0, capsys.readouterr().err
    (request,) = stub.state.requests
    assert request.body["max_tokens"] == 77


@pytest.mark.usefixtures("cli_env")
def test_every_step_of_a_step_replay_sends_the_flags(
    steps_db: str, stub: StubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    script(stub, "gpt-4o", identical_steps())
    argv = ["replay", "--db", steps_db, "--conversation", STEPS_CONVERSATION, "--provider", "openai",
            "--model", "gpt-4o", "--steps", "--max-tokens", "555"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    sent = [r.body for r in stub.state.requests]
    assert len(sent) > 1 and all(body["max_completion_tokens"] == 555 for body in sent)


def test_the_flags_ranges_are_the_stored_contexts() -> None:
    """A value a flag takes is one a ``traceloupe_request`` line may hold, and the other way round."""
    from core.request_context import stored
    from web.cli import flags

    assert (flags.TEMPERATURE("0"), flags.TEMPERATURE("2")) == stored.TEMPERATURE_RANGE
    assert (flags.TOP_P("0"), flags.TOP_P("1")) == stored.TOP_P_RANGE
    assert flags.MAX_STOP_SEQUENCES == stored.MAX_STOP_SEQUENCES
    assert flags.MAX_TOKENS(str(stored.MAX_TOKENS_LIMIT)) == stored.MAX_TOKENS_LIMIT
    for parse, past in ((flags.TEMPERATURE, "2.0001"), (flags.TOP_P, "1.0001"), (flags.MAX_TOKENS, "0")):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(past)
