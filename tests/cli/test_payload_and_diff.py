"""``traceloupe payload`` and ``traceloupe diff``: bodies, phases, --upto, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core import MESSAGE_ADAPTER, IntermediateTrace, ToolReturn
from tests.providers.builders import ASSETS, call, reply, tool, user
from web.cli import main


def write_jsonl(path: Path, *messages: object) -> Path:
    path.write_text("".join(MESSAGE_ADAPTER.dump_json(m).decode() + "\n" for m in messages), encoding="utf-8")  # type: ignore[arg-type]
    return path


@pytest.fixture
def trace_file(tmp_path: Path) -> Path:
    records = [
        reply("", 1, tool_calls=[call("c1")]),
        tool(1, ToolReturn(call_id="c1", name="get_weather", result="18C")),
        reply("18C in Paris.", 2),
    ]
    first = user("Weather?", 1, intermediate_trace=IntermediateTrace(records=records))
    second = user("Thanks!", 3)
    other = user("Unrelated", 1, conversation_id="c2")
    return write_jsonl(tmp_path / "trace.jsonl", second, first, other)


def test_payload_prints_the_body(trace_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["payload", str(trace_file), "--provider", "anthropic", "--conversation", "c1"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    assert body["messages"][-1]["content"] == [{"type": "text", "text": "Thanks!"}]


def test_payload_upto_is_the_request_that_produced_the_message(
    trace_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["payload", str(trace_file), "--provider", "openai", "--conversation", "c1", "--upto", "a2"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool"]


def test_payload_phases(trace_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["payload", str(trace_file), "--provider", "gemini", "--conversation", "c1", "--phases"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["phases", "warnings", "provenance"]
    assert next(iter(out["phases"])) == "construct_prompt_context"
    assert out["provenance"]["u3"] == ["/contents/4"]


def test_payload_reads_attachments_only_under_the_given_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from core import ImageMessage

    path = write_jsonl(tmp_path / "img.jsonl", ImageMessage(content="cat.png", msg_id="u1"))
    assert main(["payload", str(path), "--provider", "gemini"]) == 0
    captured = capsys.readouterr()
    assert "no attachments root" in captured.err and "inlineData" not in captured.out
    assert main(["payload", str(path), "--provider", "gemini", "--attachments-root", str(ASSETS)]) == 0
    assert "inlineData" in capsys.readouterr().out


def test_diff_is_structural(trace_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["diff", str(trace_file), "--left", "openai", "--right", "zhipu", "--conversation", "c1"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[:2] == ["--- openai", "+++ zhipu"]
    assert '~ /model: "gpt-4.1" -> "glm-4.6v"' in out
    assert '~ /messages/1/content: null -> ""' in out
    assert main(["diff", str(trace_file), "--left", "openai", "--right", "openai", "--conversation", "c1"]) == 0


@pytest.mark.parametrize(
    ("argv", "message", "code"),
    [
        (["payload", "{f}", "--provider", "mistral"], "unknown provider 'mistral'", 2),
        (["payload", "{f}", "--provider", "openai"], "holds 2 conversations", 2),
        (["payload", "{f}", "--provider", "openai", "--conversation", "zz"], "no conversation 'zz'", 2),
        (["payload", "{f}", "--provider", "openai", "--conversation", "c1", "--upto", "nope"], "no message", 2),
        (["payload", "{missing}", "--provider", "openai"], "cannot open", 2),
        (["payload", "{bad}", "--provider", "openai"], "not valid JSON", 2),
        (["payload", "{damaged}", "--provider", "openai"], "助理消息需要子类实现转换过程 (msg_id=bad-1", 1),
        (["diff", "{damaged}", "--left", "openai", "--right", "gemini"], "msg_id=bad-1", 2),
        (["diff", "{f}", "--left", "openai", "--right", "x", "--conversation", "c1"], "unknown provider 'x'", 2),
    ],
)
def test_errors_are_one_line_and_non_zero(
    trace_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str, code: int
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text(
        json.dumps(
            {
                "role": "user",
                "msg_type": "text",
                "content": "hi",
                "msg_id": "u1",
                "intermediate_trace": {"records": [{"role": "assistant", "content": "lost", "msg_id": "bad-1"}]},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    names = {"f": trace_file, "missing": tmp_path / "nope.jsonl", "bad": bad, "damaged": damaged}
    assert main([a.format(**names) for a in argv]) == code
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


@pytest.mark.parametrize(
    "command", [["payload", "--provider", "openai"], ["diff", "--left", "openai", "--right", "gemini"]]
)
def test_a_hand_written_record_without_msg_type_is_explained_in_english(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text(
        json.dumps({"role": "user", "content": "Hello", "msg_id": "m1", "conversation_id": "c"}) + "\n",
        encoding="utf-8",
    )
    assert main([command[0], str(path), *command[1:]]) != 0
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "用户消息需要子类实现转换过程 (msg_id=m1, role=user)" in line  # the seed's words stay
    assert "the user record m1 has no msg_type" in line
    assert "traceloupe check" in line and "traceloupe repair" in line


def test_diff_text_shows_control_and_bidi_characters_from_a_trace_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path / "evil.jsonl", user("pay\u202etxt.exe \x9b31m \x1b[2J", 1))
    assert main(["diff", str(path), "--left", "openai", "--right", "anthropic", "--width", "0"]) == 1
    out = capsys.readouterr().out
    assert "\u202e" not in out and "\x9b" not in out and "\x1b" not in out
    assert "pay\\u202etxt.exe \\x9b31m" in out


@pytest.mark.parametrize(("model", "thinking"), [("claude-sonnet-4-5", "enabled"), ("claude-opus-4-7", "adaptive")])
def test_payload_model_chooses_the_thinking_form_and_switches_it_off_for_an_unsigned_tool_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], model: str, thinking: str
) -> None:
    """--model picks the profile; a history whose last tool turn has no signed thinking gets thinking off,
    with a warning saying why (Anthropic 400 "Expected `thinking` ... but found `tool_use`")."""
    plain = write_jsonl(tmp_path / "plain.jsonl", user("Hi", 1))
    args = ["payload", "--provider", "anthropic", "--model", model, "--thinking", "on", "--conversation", "c1"]
    assert main([*args[:1], str(plain), *args[1:]]) == 0
    assert json.loads(capsys.readouterr().out)["thinking"]["type"] == thinking
    unsigned = write_jsonl(
        tmp_path / "unsigned.jsonl",
        user("Weather?", 1),
        reply("", 1, tool_calls=[call("c1")]),
        tool(1, ToolReturn(call_id="c1", name="get_weather", result="18C")),
    )
    assert main([*args[:1], str(unsigned), *args[1:]]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["thinking"] == {"type": "disabled"}  # stdout holds the body alone
    assert "thinking switched off" in captured.err and "tool_use" in captured.err


def test_check_payload_and_diff_read_an_export_as_it_is(
    trace_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An export's lines of runs, step runs and suites were refused as "not a message"; they are skipped with one
    note, and the commands read its messages."""
    from core.store import Store
    from tests.store.every_kind import fill_every_kind

    with Store.open(str(tmp_path / "runs.db")) as store:
        fill_every_kind(store)
    assert main(["export", "--db", str(tmp_path / "runs.db"), "-o", str(tmp_path / "all.jsonl")]) == 0
    others = [  # the request contexts name conversations of the store, not of this file: left out
        line
        for line in (tmp_path / "all.jsonl").read_bytes().splitlines()
        if line.startswith(b'{"traceloupe_') and not line.startswith(b'{"traceloupe_request"')
    ]
    export = tmp_path / "export.jsonl"
    export.write_bytes(trace_file.read_bytes() + b"".join(line + b"\n" for line in others))
    note = (
        f"note: {export}: skipped 24 lines that hold other records, not messages (2 traceloupe_run, "
        "2 traceloupe_step_run, 4 traceloupe_step, 2 traceloupe_suite, 4 traceloupe_suite_member, "
        "3 traceloupe_suite_run, 7 traceloupe_suite_run_item); read the messages only"
    )
    commands = [
        ["check", str(export)],
        ["payload", str(export), "--provider", "openai", "--conversation", "c1"],
        ["diff", str(export), "--left", "openai", "--right", "openai", "--conversation", "c1"],
    ]
    for argv in commands:
        assert main(argv) == 0, argv
        err = capsys.readouterr().err.splitlines()
        assert err[0] == note
        assert not [line for line in err if line.startswith(("error", "note")) and line != note]
