"""``payload`` and ``diff`` build with the request context the file stores (read as an import reads it), and
``--tools FILE`` / ``--tool-choice`` set or override it; a bad flag or a bad context line is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.replay.steps_data import STEPS_CONVERSATION, TURN, steps_conversation
from web.cli import main

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
STORED = [{"name": n, "description": f"the {n} tool", "input_schema": SCHEMA} for n in ("search_flights", "book")]


def _context(turn: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"traceloupe_request": {"conversation_id": STEPS_CONVERSATION, "turn": turn, **fields}}


def _file(tmp_path: Path, *contexts: dict[str, Any]) -> Path:
    path = tmp_path / "agent.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in [*steps_conversation(), *contexts]))
    return path


def _payload(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["payload", *argv, "--json"]) in (0, 4), capsys.readouterr().err
    body: dict[str, Any] = json.loads(capsys.readouterr().out)["body"]
    return body


def test_payload_carries_the_stored_tools_and_parameters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, _context(tools=STORED, params={"max_tokens": 321}))
    body = _payload(capsys, str(path), "--provider", "anthropic")
    assert body["tools"] == [
        {"name": "search_flights", "description": "the search_flights tool", "input_schema": SCHEMA},
        {"name": "book", "description": "the book tool", "input_schema": SCHEMA},
    ]
    assert body["max_tokens"] == 321


def test_the_turns_own_context_is_used_for_its_requests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, _context(tools=STORED), _context(TURN, tools=[{"name": "weather"}]))
    body = _payload(capsys, str(path), "--provider", "openai")
    assert [t["function"]["name"] for t in body["tools"]] == ["weather"]
    before_the_turn = _payload(capsys, str(path), "--provider", "openai", "--upto", TURN)
    assert [t["function"]["name"] for t in before_the_turn["tools"]] == ["search_flights", "book"]


def test_tools_flag_in_any_shape_overrides_the_stored_tools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"functionDeclarations": [{"name": "hotel", "parameters": {"type": "OBJECT"}}]}]))
    path = _file(tmp_path, _context(tools=STORED))
    body = _payload(capsys, str(path), "--provider", "openai", "--tools", str(tools))
    assert body["tools"][0]["function"]["name"] == "hotel"
    assert body["tools"][0]["function"]["parameters"] == {"type": "object"}


def test_diff_builds_both_sides_with_the_stored_tools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, _context(tools=STORED))
    assert main(["diff", str(path), "--left", "openai", "--right", "anthropic", "--json"]) == 1
    pointers = {change["pointer"] for change in json.loads(capsys.readouterr().out)["changes"]}
    assert any(pointer.startswith("/tools") for pointer in pointers)


@pytest.mark.parametrize(
    ("tools", "argv", "words"),
    [
        ([{"name": "x", "parameters": {"type": "array"}}], ["--tools", "{tools}"], "at $[0].parameters.type: "),
        ("not json", ["--tools", "{tools}"], "not JSON"),
        (None, ["--tools", "{missing}"], "cannot read"),
        (None, ["--tool-choice", "bad\nname"], "control character"),
    ],
)
def test_a_bad_flag_is_argparses_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tools: Any, argv: list[str], words: str
) -> None:
    file = tmp_path / "tools.json"
    file.write_text(tools if isinstance(tools, str) else json.dumps(tools))
    given = [a.format(tools=file, missing=tmp_path / "missing.json") for a in argv]
    assert main(["payload", str(_file(tmp_path)), "--provider", "openai", *given]) == 2
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert words in line


def test_a_tool_choice_naming_no_tool_of_the_request_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, _context(tools=STORED))
    assert main(["payload", str(path), "--provider", "openai", "--tool-choice", "hotel"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: --tool-choice names tool 'hotel', not among the tools ('search_flights', 'book'); "
        "give that tool with --tools"
    ]


def test_a_bad_context_line_is_the_imports_error_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, _context(tools=STORED, params={"temperature": 9}))
    assert main(["payload", str(path), "--provider", "openai"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {path}:3 at $.traceloupe_request.params.temperature: not a request context: ")
