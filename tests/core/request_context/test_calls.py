"""Turns as a request and a check see them: which turn a request is built in, and whose tools apply there."""

from __future__ import annotations

import pytest

from core.messages.union import MESSAGE_ADAPTER, Message
from core.providers.base import ToolSpec
from core.request_context import StoredRequest
from core.request_context.calls import TurnTracker, applying, request_turn, undefined_tool_calls
from tests.replay.steps_data import STEPS_CONVERSATION, TURN, steps_conversation


def _messages() -> list[Message]:
    later = {"role": "user", "msg_type": "text", "content": "And back?", "msg_id": "u2",
             "conversation_id": STEPS_CONVERSATION, "create_ts": 9_000}  # fmt: skip
    answer = {"role": "assistant", "msg_type": "text", "content": "", "msg_id": "a2", "create_ts": 9_100,
              "conversation_id": STEPS_CONVERSATION, "tool_calls": [{"id": "c", "name": "return_flight"}]}  # fmt: skip
    return [MESSAGE_ADAPTER.validate_python(m) for m in [*steps_conversation(), later, answer]]


@pytest.mark.parametrize(
    ("upto", "turn"),
    [(None, "u2"), ("sa-2", TURN), ("u2", TURN), ("a2", "u2"), ("ss", None), (TURN, None)],
)
def test_a_request_is_built_in_the_turn_that_holds_its_message(upto: str | None, turn: str | None) -> None:
    assert request_turn(_messages(), upto) == turn


def test_a_turns_own_context_applies_else_the_conversations() -> None:
    whole, own = StoredRequest(STEPS_CONVERSATION), StoredRequest(STEPS_CONVERSATION, turn="u2")
    assert applying([whole, own], STEPS_CONVERSATION, "u2") is own
    assert applying([whole, own], STEPS_CONVERSATION, TURN) is whole
    assert applying([own], STEPS_CONVERSATION, TURN) is None
    assert applying([whole], "another", None) is None


def test_a_top_level_call_belongs_to_the_turn_before_it() -> None:
    tracker = TurnTracker()
    recorded = [tracker.calls(m, "$", f"f:{i}") for i, m in enumerate(_messages(), 1)]
    contexts = [StoredRequest(STEPS_CONVERSATION, turn="u2", tools=(ToolSpec("return_flight"),)),
                StoredRequest(STEPS_CONVERSATION, tools=(ToolSpec("search_flights"),))]  # fmt: skip
    found = undefined_tool_calls(recorded, contexts)
    assert [(c.where, c.name, c.turn) for c in found] == [
        ("f:2", "book", None), ("f:2", "weather", None), ("f:2", "hotel", None)]  # fmt: skip
