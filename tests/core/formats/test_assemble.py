"""The assembler's rules, each seen in real files: resent histories merge by meaning, conversation identity in
order, tool results by part type, derived call ids paired by order and name, placeholders and missing content
said out loud, stable ids, and data with no place kept aside."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from core.formats.events import ConversationKey, ModelCall, SourceRef, ToolExecution
from core.formats.genai_messages import MessageReader
from core.formats.records import IMPORT_KEY, PLACEHOLDER_TEXT, assemble, import_marks
from core.llm.messages import (
    LLMAssistantMessage,
    LLMMessage,
    LLMSystemMessage,
    LLMTextPart,
    LLMToolCall,
    LLMToolMessage,
    LLMUserMessage,
)
from core.messages.union import MESSAGE_ADAPTER
from tests.core.formats.summary import summary, tool_calls

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NO_KEY = ConversationKey()


def user(text: str) -> LLMUserMessage:
    return LLMUserMessage((LLMTextPart(text),))


def reply(text: str, *calls: LLMToolCall) -> LLMAssistantMessage:
    return LLMAssistantMessage(text, None, calls)


def call(
    n: int,
    sent: tuple[LLMMessage, ...] | None,
    out: tuple[LLMMessage, ...] | None,
    key: ConversationKey = NO_KEY,
    timed: bool = True,
    trace: str = "t1",
) -> ModelCall:
    when = T0 + timedelta(seconds=n) if timed else None
    return ModelCall(SourceRef("f.json", n, f"span{n}", trace), key, sent, out, None, when, when)


def conversations(events: list[ModelCall | ToolExecution]) -> dict[str, list[str]]:
    return {c.conversation_id: summary(c.messages) for c in assemble(events).conversations}


WEATHER = LLMToolCall("c1", "weather", '{"city": "Paris"}')
TURN_1 = (LLMSystemMessage("Be brief."), user("Weather in Paris?"))
TURN_1_CALLS = [
    call(1, TURN_1, (reply("", WEATHER),)),
    call(2, (*TURN_1, reply("", WEATHER), LLMToolMessage("rainy", "c1")), (reply("Rainy."),)),
    call(
        3,
        (*TURN_1, reply("", WEATHER), LLMToolMessage("rainy", "c1"), reply("Rainy."), user("And Lyon?")),
        (reply("Sunny."),),
    ),
]
EXPECTED = ["system", "user:text", "  assistant:text+1calls", "  tool:c1", "  assistant:text", "user:text"]
EXPECTED += ["  assistant:text"]


def test_calls_that_resend_the_history_make_one_conversation() -> None:
    assert conversations(list(TURN_1_CALLS)) == {"span1": EXPECTED}


def test_arguments_written_empty_and_resent_as_an_empty_object_are_the_same_call() -> None:
    first = LLMToolCall("c9", "list", "")
    resent = LLMToolCall("c9", "list", "{}")
    events = [
        call(1, (user("List them."),), (reply("", first),)),
        call(2, (user("List them."), reply("", resent), LLMToolMessage("a, b", "c9")), (reply("a and b"),)),
    ]
    got = assemble(events).conversations
    assert len(got) == 1
    assert tool_calls(got[0].messages) == [("c9", "list", "")]


def test_a_session_id_joins_calls_whose_histories_do_not_continue() -> None:
    key = ConversationKey(conversation="session-7")
    events = [
        call(1, (LLMSystemMessage("S"), user("one")), (reply("1"),), key),
        call(2, (LLMSystemMessage("S"), user("two")), (reply("2"),), key),
    ]
    result = assemble(events)
    assert [(c.conversation_id, summary(c.messages)) for c in result.conversations] == [
        ("session-7", ["system", "user:text", "  assistant:text", "user:text", "  assistant:text"])
    ]
    assert any("2 separate histories" in n.text for n in result.notes)


def test_the_conversation_id_wins_over_the_thread_and_calls_of_other_traces_join_by_prefix() -> None:
    events = [
        call(1, (user("hi"),), (reply("hello"),), ConversationKey("conv", "thread-a")),
        call(2, (user("other"),), (reply("x"),), ConversationKey(None, "thread-b")),
        call(3, (user("hi"), reply("hello"), user("more")), (reply("sure"),), trace="t2"),
    ]
    got = conversations(events)
    assert set(got) == {"conv", "thread-b", "span3"}


def test_keyless_calls_of_two_traces_that_continue_one_history_are_one_conversation() -> None:
    events = [
        call(1, (user("hi"),), (reply("hello"),), trace="t1"),
        call(2, (user("hi"), reply("hello"), user("more")), (reply("sure"),), trace="t2"),
    ]
    assert conversations(events) == {"span1": ["user:text", "  assistant:text", "user:text", "  assistant:text"]}


def test_tool_results_sent_as_a_user_message_are_tool_results_not_a_turn() -> None:
    reader = MessageReader()
    sent = reader.messages(
        [
            {"role": "user", "parts": [{"type": "text", "content": "Weather?"}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "t1", "name": "w", "arguments": {"c": 1}}]},
            {"role": "user", "parts": [{"type": "tool_call_response", "id": "t1", "response": {"temp": 9}}]},
        ]
    )
    assert [m.role for m in sent] == ["user", "assistant", "tool"]
    assert isinstance(sent[1], LLMAssistantMessage) and sent[1].tool_calls[0].arguments == '{"c": 1}'
    assert isinstance(sent[2], LLMToolMessage) and sent[2].content == '{"temp": 9}'


def test_calls_without_ids_get_derived_ids_and_results_pair_by_name_and_order() -> None:
    calls = (LLMToolCall("", "a", "{}"), LLMToolCall("", "b", "{}"))
    events = [
        call(
            1,
            (user("go"), reply("", *calls), LLMToolMessage("B", None, "b"), LLMToolMessage("A", None, "a")),
            (reply("done"),),
        )
    ]
    messages = assemble(events).conversations[0].messages
    records = messages[0]["intermediate_trace"]["records"]
    ids = [c["id"] for c in records[0]["tool_calls"]]
    assert all(ids) and len(set(ids)) == 2
    assert [r["tool_reses"][0]["call_id"] for r in records[1:3]] == [ids[1], ids[0]]
    assert assemble(events).conversations[0].messages == messages


def test_a_tool_span_without_a_call_id_answers_the_open_call_of_its_name() -> None:
    run = ToolExecution(SourceRef("f.json", 9, "tool9", "t1"), ConversationKey(), "weather", None, None, "cloudy")
    events = [call(1, (user("Weather?"),), (reply("", WEATHER),)), run]
    messages = assemble(events).conversations[0].messages
    tool = messages[0]["intermediate_trace"]["records"][1]
    assert tool["tool_reses"][0] | {} == {
        "call_id": "c1",
        "name": "weather",
        "result": "cloudy",
        "attachments": [],
        "is_error": False,
    }


def test_a_failed_tool_span_marks_the_result_the_next_call_resent_as_an_error() -> None:
    # The agent sends the model the error as the tool's text (OpenAI has no error flag); its tool span failed.
    failed = ToolExecution(SourceRef("f.json", 2, "tool2", "t1"), NO_KEY, "weather", "c1", None, "no station", True)
    resent = (user("Weather?"), reply("", WEATHER), LLMToolMessage("error: no station", "c1"))
    events = [call(1, (user("Weather?"),), (reply("", WEATHER),)), failed, call(3, resent, (reply("Unknown."),))]
    messages = assemble(events).conversations[0].messages
    tool = messages[0]["intermediate_trace"]["records"][1]
    assert tool["tool_reses"][0] | {} == {
        "call_id": "c1",
        "name": "weather",
        "result": "error: no station",
        "attachments": [],
        "is_error": True,
    }


def test_a_transcript_without_a_user_turn_gets_a_marked_placeholder_and_a_note() -> None:
    result = assemble([call(1, (LLMSystemMessage("S"),), (reply("Hello, how can I help?"),))])
    top = result.conversations[0].messages
    assert [m["role"] for m in top] == ["system", "user"]
    assert top[1]["content"] == PLACEHOLDER_TEXT
    assert top[1]["additional_kwargs"] == {IMPORT_KEY: {"placeholder": True}}
    assert any("placeholder" in n.text for n in result.notes)
    assert any("placeholder user turn" in mark for mark in import_marks(top[1]))


def test_content_that_was_not_captured_is_reported_not_stored_as_empty_turns() -> None:
    result = assemble([call(1, None, None), call(2, (user("hi"),), None)])
    assert [summary(c.messages) for c in result.conversations] == [["user:text"]]
    assert [n.text for n in result.notes] == [
        "model call content was not captured: nothing stored for it",
        "model call output was not captured: its input alone is stored",
    ]


def test_data_with_no_place_is_kept_on_the_reply_and_reported() -> None:
    extra_call = ModelCall(
        SourceRef("f.json", 1, "s1"), ConversationKey(), (user("hi"),), (reply("yo"),), extra={"llm.cost.total": 0.5}
    )
    result = assemble([extra_call])
    reply_record = result.conversations[0].messages[0]["intermediate_trace"]["records"][0]
    assert reply_record["additional_kwargs"][IMPORT_KEY]["unplaced"] == {"llm.cost.total": 0.5}
    assert any("llm.cost.total (1)" in n.text for n in result.notes)
    assert any("llm.cost.total" in mark for mark in import_marks(result.conversations[0].messages[0]))


def test_every_assembled_message_is_a_valid_stored_message() -> None:
    for conversation in assemble(list(TURN_1_CALLS)).conversations:
        for raw in conversation.messages:
            assert MESSAGE_ADAPTER.validate_python(raw).conversation_id == conversation.conversation_id


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False), st.booleans())
def test_split_histories_in_any_order_assemble_to_the_same_conversation(rng: random.Random, timed: bool) -> None:
    """A file's order never matters: shuffled, with or without times, the same ids and messages come out."""
    events = [call(n, c.input, c.output, timed=timed) for n, c in enumerate(TURN_1_CALLS, 1)]
    expected = assemble(events).conversations
    shuffled = list(events)
    rng.shuffle(shuffled)
    got = assemble(shuffled).conversations
    assert [(c.conversation_id, c.messages) for c in got] == [(c.conversation_id, c.messages) for c in expected]
    assert summary(got[0].messages) == EXPECTED


def test_turns_sent_with_different_requests_get_a_context_each() -> None:
    from core.request_context.stored import StoredRequest

    def with_model(event: ModelCall, model: str) -> ModelCall:
        return ModelCall(event.source, event.key, event.input, event.output, StoredRequest("", model=model))

    same = assemble([with_model(c, "m1") for c in TURN_1_CALLS])
    assert [(r.turn, r.model) for r, _ in same.requests] == [(None, "m1")]
    differ = assemble([with_model(c, m) for c, m in zip(TURN_1_CALLS, ["m1", "m1", "m2"], strict=True)])
    turns = [m["msg_id"] for m in differ.conversations[0].messages if m["role"] == "user"]
    assert [(r.turn, r.model) for r, _ in differ.requests] == [(turns[0], "m1"), (turns[1], "m2")]


def _flattened(messages: list[dict[str, object]]) -> list[LLMMessage]:
    """A stored conversation back as the neutral transcript (what a request built from it would carry)."""
    out: list[LLMMessage] = []
    for raw in messages:
        message = MESSAGE_ADAPTER.validate_python(raw)
        for stored in [message, *getattr(getattr(message, "intermediate_trace", None), "records", [])]:
            got = stored.to_llm_request()
            out.extend(got if isinstance(got, list) else [got])
    return [msgspec.structs.replace(m, msg_id=None) for m in out]


WORDS = st.text(alphabet="abcdefgh ", min_size=1, max_size=8).map(str.strip).filter(bool)


@st.composite
def transcripts(draw: st.DrawFn) -> list[LLMMessage]:
    """A conversation as an agent's calls see it: turns of a user message, tool rounds, a final answer."""
    out: list[LLMMessage] = [LLMSystemMessage(draw(WORDS))]
    for turn in range(draw(st.integers(1, 3))):
        out.append(user(f"{turn}: {draw(WORDS)}"))
        for step in range(draw(st.integers(0, 2))):
            calls = tuple(
                LLMToolCall(f"c{turn}-{step}-{k}", draw(st.sampled_from(["a", "b"])), '{"x": 1}')
                for k in range(draw(st.integers(1, 2)))
            )
            out.append(reply(draw(WORDS), *calls))
            out.extend(LLMToolMessage(draw(WORDS), c.id, c.name) for c in calls)
        out.append(reply(f"answer {turn}"))
    return out


@settings(max_examples=60, deadline=None)
@given(transcripts(), st.randoms(use_true_random=False), st.booleans())
def test_a_transcript_split_into_calls_in_any_order_comes_back_whole(
    transcript: list[LLMMessage], rng: random.Random, timed: bool
) -> None:
    """Each assistant message is one call's output, its input all that came before; shuffled, the calls
    assemble to one conversation whose requests carry the transcript again (the inverse of to_llm_request)."""
    events = [
        call(i, tuple(transcript[:i]), (m,), timed=timed)
        for i, m in enumerate(transcript)
        if isinstance(m, LLMAssistantMessage)
    ]
    rng.shuffle(events)
    result = assemble(events)
    assert len(result.conversations) == 1
    assert _flattened(result.conversations[0].messages) == transcript


def test_a_call_whose_id_a_reader_made_is_the_same_call_when_the_agent_resends_it_under_its_own_id() -> None:
    from core.formats.transcript import same_message
    from core.llm.messages import MADE_CALL_ID, LLMAssistantMessage, LLMToolCall

    answered = LLMAssistantMessage(tool_calls=(LLMToolCall("lookup_0", "lookup", "{}", {MADE_CALL_ID: True}),))
    resent = LLMAssistantMessage(tool_calls=(LLMToolCall("agent-7", "lookup", "{}"),))
    other_name = LLMAssistantMessage(tool_calls=(LLMToolCall("agent-7", "search", "{}"),))
    given_both = LLMAssistantMessage(tool_calls=(LLMToolCall("agent-8", "lookup", "{}"),))
    assert same_message(answered, resent)
    assert not same_message(answered, other_name)
    assert not same_message(resent, given_both)  # two ids the sources gave are two calls
