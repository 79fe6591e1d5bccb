"""Events spilled while a file's parts are found read back as they were written, each message once."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta, timezone

from core.formats.events import ConversationKey, ModelCall, SourceRef, ToolExecution
from core.formats.kept_events import PartReads, SpilledEvents
from core.llm.messages import LLMAssistantMessage, LLMSystemMessage, LLMTextPart, LLMToolCall, LLMUserMessage
from core.providers.request import GenerationParams, ToolSpec
from core.request_context.stored import StoredRequest

SYSTEM = LLMSystemMessage("You book trips.")
USER = LLMUserMessage((LLMTextPart("A table for two?"),))
CALL = LLMAssistantMessage(tool_calls=(LLMToolCall("c1", "book", '{"n": 2}'),))
REQUEST = StoredRequest(
    "conv", provider="openai", model="gpt-4o", tools=(ToolSpec("book", "Books.", {"type": "object"}),),
    params=GenerationParams(temperature=0.2),
)  # fmt: skip


def _calls() -> list[ModelCall]:
    source = SourceRef("x.json", line=3, source_id="span1", trace="t1")
    at = datetime(2026, 1, 1, 12, tzinfo=timezone(timedelta(hours=2)))
    first = ModelCall(source, ConversationKey("conv"), (SYSTEM, USER), (CALL,), REQUEST, at, None, None, {"u": 1})
    second = ModelCall(source, ConversationKey(), (SYSTEM, USER, CALL), None, incomplete="dropped", started_at=at)
    utc = datetime.fromtimestamp(1_767_268_800.123456, tz=UTC)
    third = ModelCall(source, ConversationKey(thread="t"), None, (), started_at=utc, ended_at=utc + timedelta(days=1))
    return [first, second, third]


def test_spilled_events_read_back_equal_and_share_one_object_per_message() -> None:
    at = datetime(1969, 7, 20, 20, 17, 40, 7, tzinfo=UTC)
    run = ToolExecution(SourceRef("x.json", source_id="tool1"), ConversationKey(), "book", "c1", "{}", "done", True, at)
    events = [*_calls(), run]
    with tempfile.TemporaryFile() as file:
        spilled = SpilledEvents(file)
        places = [spilled.write(event) for event in events]
        spilled.written()
        reads = PartReads()
        back = [spilled.read(offset, length, reads) for offset, length in places]
    assert back == events
    assert back[0].started_at is not None and back[0].started_at.utcoffset() == timedelta(hours=2)
    assert [e.started_at.tzinfo for e in back[2:] if e.started_at is not None] == [UTC, UTC]
    first, second = back[0], back[1]
    assert isinstance(first, ModelCall) and isinstance(second, ModelCall)
    assert first.input is not None and second.input is not None and first.output is not None
    assert second.input[0] is first.input[0] and second.input[2] is first.output[0]
    assert len(reads.read) == 4  # the system prompt, the question, the call and the request, each read once


def test_a_resent_history_and_request_are_written_once() -> None:
    history = (LLMSystemMessage("You book trips. " * 100), USER, CALL)
    call = ModelCall(SourceRef("x.json"), ConversationKey(), history, None, REQUEST)
    with tempfile.TemporaryFile() as once, tempfile.TemporaryFile() as resent:
        one = SpilledEvents(once)
        one.write(call)
        one.written()
        many = SpilledEvents(resent)
        for _ in range(20):
            many.write(call)
        many.written()
        assert resent.tell() < 3 * once.tell(), (once.tell(), resent.tell())


def test_events_read_back_while_others_are_written_stay_whole() -> None:
    # A read between writes must not move where the next pickles are written (over those already there).
    first, second, third = _calls()
    with tempfile.TemporaryFile() as file:
        spilled = SpilledEvents(file)
        places = [spilled.write(first)]
        assert spilled.read(*places[0], PartReads()) == first
        places += [spilled.write(second), spilled.write(third)]
        spilled.written()
        reads = PartReads()
        assert [spilled.read(offset, length, reads) for offset, length in places] == [first, second, third]
