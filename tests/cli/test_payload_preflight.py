"""``traceloupe payload``: every body is preflighted; findings on stderr, exit 4 on an error, --json and --report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core import AudioMessage, ToolReturn
from tests.cli.test_payload_and_diff import write_jsonl
from tests.providers.builders import call, reply, tool, user
from web.cli import main
from web.cli.payload import EXIT_PREFLIGHT


@pytest.fixture
def tool_file(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "tool.jsonl",
        user("Weather?", 1),
        reply("", 1, tool_calls=[call("c1")]),
        tool(1, ToolReturn(call_id="c1", name="get_weather", result="18C")).model_copy(
            update={"conversation_id": "c1"}
        ),
        reply("18C in Paris.", 2),
    )


def test_an_accepted_body_is_printed_alone_with_exit_0(tool_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["payload", str(tool_file), "--provider", "openai"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["messages"][1]["tool_calls"][0]["id"] == "c1"
    assert "preflight" not in captured.err


@pytest.mark.usefixtures("result_before_call")
def test_a_body_that_breaks_a_rule_exits_4_naming_the_rule_on_stderr(
    tool_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["payload", str(tool_file), "--provider", "openai"]) == EXIT_PREFLIGHT
    captured = capsys.readouterr()
    json.loads(captured.out)  # the body is still printed, for reproducing the 400
    lines = [line for line in captured.err.splitlines() if line.startswith("preflight ")]
    assert any("error: result-before-call at t1" in line for line in lines), captured.err
    assert all("OpenAI 400" in line for line in lines)


@pytest.mark.usefixtures("result_before_call")
def test_json_output_carries_the_findings(tool_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["payload", str(tool_file), "--provider", "openai", "--json"]) == EXIT_PREFLIGHT
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["body", "warnings", "preflight"]
    assert out["preflight"]["accepted"] is False
    rules = {(f["rule"], f["severity"], f["msg_id"]) for f in out["preflight"]["findings"]}
    assert ("result-before-call", "error", "t1") in rules


def test_json_output_of_an_accepted_body(tool_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["payload", str(tool_file), "--provider", "gemini", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["preflight"]["accepted"] is True and out["preflight"]["findings"] == []
    assert out["body"]["contents"][0]["parts"] == [{"text": "Weather?"}]


@pytest.fixture
def audio_file(tmp_path: Path) -> Path:
    voice = AudioMessage(content="https://example.com/voice.wav", msg_id="u1", create_ts=1000, conversation_id="c1")
    return write_jsonl(tmp_path / "audio.jsonl", voice, reply("Heard you.", 1))


def test_report_json_has_the_documented_shape(audio_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["payload", str(audio_file), "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--report", "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report) == ["provider", "model", "profile", "cannot_carry", "fixes", "preflight"]
    assert (report["provider"], report["model"]) == ("anthropic", "claude-sonnet-4-5")
    assert isinstance(report["profile"], str) and report["profile"]
    assert report["cannot_carry"] == [
        {"kind": "audio", "msg_ids": ["u1"], "what_happens": "Anthropic takes no audio; sent as text"}
    ]
    assert report["preflight"] == []


def test_report_text_says_what_cannot_be_carried_and_the_verdict(
    audio_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["payload", str(audio_file), "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--report"]) == 0
    )
    out = capsys.readouterr().out
    assert "audio x1 (u1): Anthropic takes no audio; sent as text" in out
    assert "accepted by the SDK types and provider rules for claude-sonnet-4-5" in out


@pytest.mark.usefixtures("result_before_call")
def test_report_lists_the_findings_and_exits_4(tool_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["payload", str(tool_file), "--provider", "openai", "--report", "--json"]) == EXIT_PREFLIGHT
    findings = json.loads(capsys.readouterr().out)["preflight"]
    assert {"rule": "result-before-call", "severity": "error"}.items() <= findings[0].items()
    assert findings[0]["msg_id"] == "t1" and findings[0]["authority"]


def test_control_characters_from_the_trace_are_escaped_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    voice = AudioMessage(content="https://example.com/v.wav", msg_id="u\x1b[2J1", create_ts=1000, conversation_id="c1")
    path = write_jsonl(tmp_path / "esc.jsonl", voice)
    assert main(["payload", str(path), "--provider", "anthropic"]) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "u\\x1b[2J1" in err


def test_thinking_on_with_an_unsigned_last_tool_turn_prints_a_body_with_thinking_off_and_says_why(
    tool_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Anthropic 400 "Expected `thinking` or `redacted_thinking`, but found `tool_use`" (litellm#15601): the
    # recorded tool turn has no signed thinking, so thinking is switched off for this request, as LiteLLM does.
    argv = ["payload", str(tool_file), "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--thinking", "on"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    body = json.loads(captured.out)  # stdout is the JSON body alone
    assert body.get("thinking", {"type": "disabled"}) == {"type": "disabled"}
    assert body["model"] == "claude-sonnet-4-5"
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning: ")]
    assert any("thinking" in line and "tool_use" in line for line in warnings), captured.err
    assert "preflight" not in captured.err


@pytest.mark.parametrize(
    ("provider", "options", "rules"),
    [
        ("anthropic", ["--temperature", "1.5"], {"temperature-range"}),
        ("gemini", [*(arg for s in "abcdef" for arg in ("--stop", s))], {"stop-sequences-count"}),
        (
            "zhipu",
            ["--temperature", "1.5", "--stop", "a", "--stop", "b"],
            {"temperature-range", "stop-sequences-count"},
        ),
    ],
)
def test_report_lists_the_sampling_fixes_with_their_sources(
    tool_file: Path, capsys: pytest.CaptureFixture[str], provider: str, options: list[str], rules: set[str]
) -> None:
    """A clamp or a cut of the request options is a fix the report names, with the provider's own source (the
    options themselves take what some provider takes: temperature 0-2, top_p 0-1)."""
    assert main(["payload", str(tool_file), "--provider", provider, *options, "--report", "--json"]) == 0
    fixes = {fix["rule"]: fix for fix in json.loads(capsys.readouterr().out)["fixes"]}
    assert rules <= fixes.keys()
    assert all(fixes[rule]["source"] not in ("", "not in the catalogue") for rule in rules)
