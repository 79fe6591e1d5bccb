"""Request context lines: an import checks them (one error naming the file, line and field; nothing stored),
stores them neutral whatever the tools' shape, an export writes them back byte-stable, and a turn finds its own."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.errors import InputError
from core.providers.base import NamedToolChoice
from core.store import Store

MESSAGES = [
    {"role": "system", "msg_type": "text", "content": "Be brief.", "msg_id": "s", "conversation_id": "C",
     "create_ts": 1},
    {"role": "user", "msg_type": "text", "content": "Weather?", "msg_id": "u1", "conversation_id": "C", "create_ts": 2},
    {"role": "assistant", "msg_type": "text", "content": "Sunny.", "msg_id": "a1", "conversation_id": "C",
     "create_ts": 3},
    {"role": "user", "msg_type": "text", "content": "And Paris?", "msg_id": "u2", "conversation_id": "C",
     "create_ts": 4},
]  # fmt: skip
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def context(**fields: Any) -> dict[str, Any]:
    return {"traceloupe_request": {"conversation_id": "C", **fields}}


WHOLE = context(
    provider="anthropic",
    model="claude-sonnet-4-5",
    tools=[{"name": "lookup", "description": "Find a city", "input_schema": SCHEMA}],
    tool_choice="auto",
    params={"max_tokens": 1024, "temperature": 0.2},
)
TURN = context(
    turn="u2",
    tools=[{"type": "function", "function": {"name": "lookup", "description": "Find a city", "parameters": SCHEMA}}],
    tool_choice={"name": "lookup"},
)


def _file(tmp_path: Path, *contexts: dict[str, Any], name: str = "in.jsonl") -> Path:
    path = tmp_path / name
    lines = [*MESSAGES, *contexts]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def _export(store: Store) -> bytes:
    texts = [text.encode() for text in store.export_texts()]
    records = [orjson.dumps(line, option=orjson.OPT_SORT_KEYS) for line in store.export_records()]
    return b"".join(line + b"\n" for line in texts + records)


def test_a_turn_gets_its_own_context_else_the_conversations(store: Store, tmp_path: Path) -> None:
    summary = store.import_path(_file(tmp_path, WHOLE, TURN))
    assert summary.records == {"request context": 2}
    own = store.request_context("C", "u2")
    assert own is not None and own.turn == "u2" and own.tool_choice == NamedToolChoice("lookup")
    assert own.tools[0].parameters == SCHEMA  # the OpenAI shape, stored neutral
    fallback = store.request_context("C", "u1")
    assert fallback is not None and fallback.turn is None and fallback.model == "claude-sonnet-4-5"
    assert store.request_context("C") == fallback
    assert [c.turn for c in store.request_contexts("C")] == [None, "u2"]


def test_a_conversation_without_a_context_has_none(store: Store, tmp_path: Path) -> None:
    store.import_path(_file(tmp_path))
    assert store.request_context("C", "u1") is None
    assert store.request_contexts("C") == []


def test_export_import_export_is_byte_identical(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "a.db")) as source:
        source.import_path(_file(tmp_path, WHOLE, TURN))
        exported = _export(source)
    lines = [orjson.loads(line) for line in exported.splitlines() if line.startswith(b'{"traceloupe_request"')]
    assert lines[0]["traceloupe_request"]["tools"][0] == {"name": "lookup", "description": "Find a city",
                                                          "parameters": SCHEMA}  # fmt: skip
    assert lines[0]["traceloupe_request"]["turn"] is None
    (tmp_path / "export.jsonl").write_bytes(exported)
    with Store.open(str(tmp_path / "b.db")) as copy:
        copy.import_path(tmp_path / "export.jsonl")
        assert _export(copy) == exported
        again = copy.import_path(tmp_path / "export.jsonl")
        assert again.records == {}  # the same contexts again: skipped


@pytest.mark.parametrize(
    ("line", "field", "words"),
    [
        (context(tools=[{"name": "x", "parameters": {"type": "array"}}]), "tools[0].parameters.type", "object"),
        (context(tools=[{"name": "x"}, {"name": "x"}]), "tools[1].name", "defined twice"),
        (context(tools=[{"name": "x"}], tool_choice={"name": "y"}), "tool_choice.name", "'y'"),
        (context(params={"temperature": 5}), "params.temperature", "out of range"),
        (context(params={"max_tokens": "many"}), "params.max_tokens", "whole number"),
        (context(tool_choice=3), "tool_choice", ""),
        (context(colour="red"), "colour", "Extra inputs"),
    ],
)
def test_a_bad_context_refuses_the_file_naming_line_and_field_and_stores_nothing(
    store: Store, tmp_path: Path, line: dict[str, Any], field: str, words: str
) -> None:
    path = _file(tmp_path, WHOLE, line)
    with pytest.raises(InputError) as caught:
        store.import_path(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:6 at $.traceloupe_request.{field}: ")
    assert words in message
    assert store.list_conversations().items == ()


@pytest.mark.parametrize(("turn", "what"), [("a1", "a message of role 'assistant'"), ("nowhere", "no message")])
def test_a_turn_that_is_not_a_user_message_of_the_conversation_refuses_the_file(
    store: Store, tmp_path: Path, turn: str, what: str
) -> None:
    path = _file(tmp_path, context(turn=turn))
    with pytest.raises(InputError) as caught:
        store.import_path(path)
    assert re.match(rf"{re.escape(str(path))}:5 at \$\.traceloupe_request\.turn: .*{what}", str(caught.value))
    assert store.list_conversations().items == ()


def test_a_changed_context_refuses_the_file_unless_replaced(store: Store, tmp_path: Path) -> None:
    store.import_path(_file(tmp_path, WHOLE))
    changed = context(provider="openai")
    with pytest.raises(InputError, match="differs from the one already stored"):
        store.import_path(_file(tmp_path, changed, name="changed.jsonl"))
    store.import_path(_file(tmp_path, changed, name="changed.jsonl"), replace=True)
    stored = store.request_context("C")
    assert stored is not None and stored.provider == "openai" and stored.tools == ()
