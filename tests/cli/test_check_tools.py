"""``traceloupe check`` and the file's request contexts: a recorded call of a tool its turn was not offered is
reported (a real model calls only the tools it was given); a bad context line is one error line, exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.replay.steps_data import STEPS_CONVERSATION, TURN, steps_conversation
from web.cli import main

OFFERED = ["search_flights", "book", "weather"]  # the turn also calls "hotel", at records[4] (step 3's second call)


def _context(tools: list[str], turn: str | None = TURN) -> dict[str, Any]:
    listed = [{"name": name, "parameters": {"type": "object", "properties": {}}} for name in tools]
    return {"traceloupe_request": {"conversation_id": STEPS_CONVERSATION, "turn": turn, "tools": listed}}


def _file(tmp_path: Path, *contexts: dict[str, Any]) -> Path:
    path = tmp_path / "agent.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in [*steps_conversation(), *contexts]))
    return path


def test_a_call_of_a_tool_the_turn_was_not_offered_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, _context(OFFERED))
    assert main(["check", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        f"{path}:2: $.intermediate_trace.records[4] msg_id=sa-3: calls tool 'hotel', which is not among the tools "
        f"stored for turn 'su-1' (search_flights, book, weather); a replay cannot retrace it"
    ]
    assert captured.err.splitlines()[-1] == (
        "checked 2 messages in 1 file(s): 1 call of a tool not among the stored tools"
    )
    assert "skipped" not in captured.err  # the context line is read, not skipped


def test_the_turns_own_context_wins_over_the_conversations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, _context(["search_flights"], turn=None), _context([*OFFERED, "hotel"]))
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == "checked 2 messages in 1 file(s): clean"


def test_without_a_context_or_with_no_stored_tools_nothing_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(_file(tmp_path))]) == 0
    assert main(["check", str(_file(tmp_path, _context([])))]) == 0
    assert capsys.readouterr().out == ""


def test_a_bad_context_line_is_one_error_line_naming_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _context(OFFERED)
    bad["traceloupe_request"]["tool_choice"] = {"name": "hotel"}
    path = _file(tmp_path, bad)
    assert main(["check", str(path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {path}:3 at $.traceloupe_request.tool_choice.name: not a request context: ")
    assert "'hotel'" in line


def test_a_context_for_a_turn_that_is_not_a_user_message_is_refused_as_the_import_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, _context(OFFERED, turn="ss"))
    assert main(["check", str(path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert f"{path}:3 at $.traceloupe_request.turn: " in line and "a message of role 'system'" in line
