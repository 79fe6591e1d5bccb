"""Reading GenAI JSON messages: a resent history is read once."""

from __future__ import annotations

import json

from core.formats.genai_messages import MessageReader

HISTORY = [
    {"role": "system", "parts": [{"type": "text", "content": "You book trips."}]},
    {"role": "user", "parts": [{"type": "text", "content": "A table for two?"}]},
    {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "book", "arguments": {"n": 2}}]},
]


def test_a_message_resent_unchanged_is_read_into_the_same_object() -> None:
    reader = MessageReader()
    first = reader.messages(json.dumps(HISTORY[:2]))
    again = reader.messages(json.dumps(HISTORY))
    assert again[0] is first[0] and again[1] is first[1]
    changed = reader.messages(json.dumps([{**HISTORY[0], "parts": [{"type": "text", "content": "Other."}]}]))
    assert changed[0] is not first[0] and changed[0].content == "Other."


def test_what_a_remembered_message_left_unplaced_is_reported_each_time_it_is_resent() -> None:
    reader = MessageReader()
    odd = {"role": "assistant", "parts": [{"type": "server_tool", "name": "x"}]}
    reader.messages(json.dumps([odd]))
    reader.unplaced = []
    reader.messages(json.dumps([odd]))
    assert reader.unplaced == [{"type": "server_tool", "name": "x"}]
