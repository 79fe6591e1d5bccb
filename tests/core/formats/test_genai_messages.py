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


def _continuing(history: list[dict[str, object]], *, compact: bool) -> list[str]:
    """Each call's input of a conversation that resends its history, as one JSON writer or another spells it."""
    separators = (",", ":") if compact else (", ", ": ")
    return [json.dumps(history[:n], separators=separators) for n in range(1, len(history) + 1)]


def test_a_history_that_continues_the_last_one_of_its_trace_reads_as_a_whole_read_would() -> None:
    odd = {"role": "assistant", "parts": [{"type": "server_tool", "name": "x"}]}
    history = [*HISTORY, odd, {"role": "user", "parts": [{"type": "text", "content": "And a taxi."}]}]
    for compact in (True, False):
        reader, whole = MessageReader(), MessageReader()
        for text in _continuing(history, compact=compact):
            reader.unplaced, whole.unplaced = [], []
            assert reader.history(text, "trace-1") == whole.messages(text)
            assert reader.unplaced == whole.unplaced
        assert reader.unplaced == [{"type": "server_tool", "name": "x"}]


def test_a_history_that_does_not_continue_the_last_one_is_read_whole() -> None:
    reader = MessageReader()
    first = json.dumps(HISTORY[:2])
    reader.history(first, "trace-1")
    edited = [{**HISTORY[0], "parts": [{"type": "text", "content": "You book flights."}]}, *HISTORY[1:]]
    assert reader.history(json.dumps(edited), "trace-1") == MessageReader().messages(json.dumps(edited))
    assert reader.history(first[:-1] + ", 7", "trace-1") == MessageReader().messages(first[:-1] + ", 7")
    other = json.dumps(HISTORY)
    assert reader.history(other, "trace-2") == MessageReader().messages(other)
    assert reader.history(first[:-1] + ", []]", "trace-1") == MessageReader().messages(first[:-1] + ", []]")
