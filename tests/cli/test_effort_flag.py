"""``--effort`` on ``payload``, ``diff`` and ``replay``: it reaches the body in each provider's own form, and a
level the model table says the model does not take is one line on stderr and exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core import TextMessage
from web.cli import main


def _file(tmp_path: Path) -> Path:
    """One question: no recorded turn a provider's thinking rules could switch thinking off for."""
    path = tmp_path / "agent.jsonl"
    question = TextMessage(content="Weather in Paris?", msg_id="u1", create_ts=1, conversation_id="c1")
    path.write_bytes(question.model_dump_json().encode() + b"\n")
    return path


def _body(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["payload", *argv, "--json"]) in (0, 4), capsys.readouterr().err
    body: dict[str, Any] = json.loads(capsys.readouterr().out)["body"]
    return body


@pytest.mark.parametrize(
    ("provider", "model", "path", "sent"),
    [
        ("openai", "gpt-5.1", ("reasoning_effort",), "high"),
        ("openai-responses", "gpt-5.1", ("reasoning", "effort"), "high"),
        ("anthropic", "claude-opus-4-7", ("output_config", "effort"), "high"),
        ("anthropic", "claude-sonnet-4-5", ("thinking", "budget_tokens"), 4096),
        ("gemini", "gemini-3-pro", ("generationConfig", "thinkingConfig", "thinkingLevel"), "HIGH"),
        ("gemini", "gemini-2.5-flash", ("generationConfig", "thinkingConfig", "thinkingBudget"), 4096),
        ("zhipu", "glm-4.6v", ("thinking", "type"), "enabled"),
        ("doubao", "doubao-seed-1-6", ("thinking", "type"), "enabled"),
    ],
)
def test_effort_reaches_the_body_in_the_providers_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], provider: str, model: str, path: tuple[str, ...], sent: object
) -> None:
    node: Any = _body(capsys, str(_file(tmp_path)), "--provider", provider, "--model", model, "--effort", "high")
    for key in path:
        node = node[key]
    assert node == sent


def test_effort_none_switches_reasoning_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = _body(capsys, str(_file(tmp_path)), "--provider", "anthropic", "--model", "claude-sonnet-4-5",
                 "--effort", "none")  # fmt: skip
    assert body["thinking"] == {"type": "disabled"}


@pytest.mark.parametrize(
    ("provider", "model", "effort", "said"),
    [
        ("openai", "gpt-5.1", "minimal", "gpt-5.1 takes --effort none, low, medium, high"),
        ("openai-responses", "gpt-5", "xhigh", "gpt-5 takes --effort none, minimal, low, medium, high"),
        ("openai", "gpt-4.1", "high", "gpt-4.1 does not reason"),
        ("gemini", "gemma-3-27b-it", "low", "gemma-3-27b-it does not reason"),
    ],
)
def test_an_effort_the_model_does_not_take_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], provider: str, model: str, effort: str, said: str
) -> None:
    argv = [str(_file(tmp_path)), "--provider", provider, "--model", model, "--effort", effort]
    assert main(["payload", *argv]) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1


def test_diff_checks_the_effort_for_each_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "diff",
        str(_file(tmp_path)),
        "--left",
        "anthropic",
        "--right",
        "openai",
        "--model",
        "gpt-4.1",
        "--effort",
        "high",
    ]
    assert main(argv) == 2
    assert "does not reason" in capsys.readouterr().err


def test_replay_refuses_an_effort_before_opening_the_database(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["replay", "--conversation", "c", "--provider", "openai", "--model", "gpt-4.1", "--effort", "low",
            "--db", "sqlite:////nonexistent/dir/x.db"]  # fmt: skip
    assert main(argv) == 2
    assert "gpt-4.1 does not reason" in capsys.readouterr().err


def test_an_unknown_effort_word_is_argparse_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["payload", str(_file(tmp_path)), "--provider", "openai", "--effort", "huge"]) == 2
    assert "invalid choice: 'huge'" in capsys.readouterr().err
