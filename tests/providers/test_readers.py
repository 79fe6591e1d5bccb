"""Each dialect's reader is its builder's inverse: reading back what we build gives the messages we built from,
modulo the normalisations its reader module documents (the generated histories avoid the others)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.formats.provider_logs import read_cassette
from core.formats.roundtrip import rebuild
from core.llm.messages import (
    LLMAssistantMessage,
    LLMImagePart,
    LLMMessage,
    LLMSystemMessage,
    LLMTextPart,
    LLMThinking,
    LLMToolCall,
    LLMToolMessage,
    LLMUserMessage,
    LLMUserPart,
)
from core.providers.base import ReadBody, ToolSpec
from core.providers.registry import provider_named

WORDS = st.text(alphabet="abcdefghij klmnop,.!é", min_size=0, max_size=12).map(lambda s: "w" + s.strip() + "z")
IDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=12)
NAMES = st.sampled_from(["lookup", "get_weather", "search"])
ARGUMENTS = st.dictionaries(st.sampled_from(["a", "city", "n"]), st.integers(-5, 5) | WORDS, max_size=3).map(
    lambda d: json.dumps(d, separators=(",", ":"), ensure_ascii=False)
)
TOOLS = tuple(ToolSpec(name=n, description=f"{n} tool") for n in ("lookup", "get_weather", "search"))


# A 1x1 PNG: the builders sniff inline bytes, so the image must be what it says.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
# How each dialect's reader gives an inline image back: Chat-style bodies hold a data URL, the others the bytes.
AS_URL = LLMImagePart(url=f"data:image/png;base64,{PNG}")
AS_DATA = LLMImagePart(data=PNG, media_type="image/png")


@st.composite
def histories(
    draw: st.DrawFn,
    thinking: bool = False,
    image: LLMImagePart | None = None,
    reasoning_text: bool = False,
    signatures: bool = False,
) -> tuple[LLMMessage, ...]:
    """Well-formed histories: an optional system prompt, turns of user text (and ``image``), an assistant answer
    with text or calls (each answered, in order), ending with a user turn or tool results. ``thinking``: signed
    thinking blocks; ``reasoning_text``: reasoning as text; ``signatures``: calls carry a thought signature."""
    out: list[LLMMessage] = []
    if draw(st.booleans()):
        out.append(LLMSystemMessage(content=draw(WORDS)))
    used: set[str] = set()
    for _ in range(draw(st.integers(1, 3))):
        parts: tuple[LLMUserPart, ...] = (LLMTextPart(text=draw(WORDS)),)
        if image is not None and draw(st.booleans()):
            parts = (*parts, image)
        out.append(LLMUserMessage(content=parts))
        n_calls = draw(st.integers(0, 2))
        calls = []
        for _ in range(n_calls):
            call_id = draw(IDS.filter(lambda i: i not in used))
            used.add(call_id)
            extra = {"thought_signature": draw(IDS)} if signatures else None
            calls.append(LLMToolCall(id=call_id, name=draw(NAMES), arguments=draw(ARGUMENTS), extra=extra))
        text = draw(WORDS) if not calls or draw(st.booleans()) else ""
        reasoning: str | tuple[LLMThinking, ...] | None = None
        if thinking and draw(st.booleans()):
            reasoning = (LLMThinking(thinking=draw(WORDS), signature=draw(IDS)),)
        elif reasoning_text and draw(st.booleans()):
            reasoning = draw(WORDS)
        out.append(LLMAssistantMessage(content=text, tool_calls=tuple(calls), reasoning_content=reasoning))
        out += [LLMToolMessage(content=draw(WORDS), tool_call_id=c.id, name=c.name) for c in calls]
    if not isinstance(out[-1], LLMToolMessage) or draw(st.booleans()):
        out.append(LLMUserMessage(content=(LLMTextPart(text=draw(WORDS)),)))
    return tuple(out)


def _read_back(name: str, messages: tuple[LLMMessage, ...], model: str) -> tuple[LLMMessage, ...]:
    dialect = provider_named(name)
    body, _ = rebuild(dialect, ReadBody(messages, model=model, tools=TOOLS))
    return dialect.read_request(body).messages


@settings(max_examples=60, deadline=None)
@given(histories(image=AS_URL))
def test_chat_completions_reads_back_what_it_builds(messages: tuple[LLMMessage, ...]) -> None:
    for name, model in (("openai", "gpt-4.1"), ("zhipu", "glm-4.6v"), ("doubao", "doubao-seed-1-6")):
        assert _read_back(name, messages, model) == messages


@settings(max_examples=40, deadline=None)
@given(histories(reasoning_text=True))
def test_zhipu_reads_back_the_reasoning_content_it_sends_back(messages: tuple[LLMMessage, ...]) -> None:
    assert _read_back("zhipu", messages, "glm-4.6v") == messages


@settings(max_examples=60, deadline=None)
@given(histories(image=AS_URL))
def test_responses_reads_back_what_it_builds(messages: tuple[LLMMessage, ...]) -> None:
    assert _read_back("openai-responses", messages, "gpt-4.1") == messages


@settings(max_examples=60, deadline=None)
@given(histories(thinking=True, image=AS_DATA))
def test_anthropic_reads_back_what_it_builds_signed_thinking_included(messages: tuple[LLMMessage, ...]) -> None:
    assert _read_back("anthropic", messages, "claude-3-7-sonnet-latest") == messages


@settings(max_examples=60, deadline=None)
@given(histories(image=AS_DATA, signatures=True))
def test_gemini_reads_back_what_it_builds_thought_signatures_included(messages: tuple[LLMMessage, ...]) -> None:
    assert _read_back("gemini", messages, "gemini-2.5-flash") == messages


CORPUS = Path(__file__).parents[1] / "formats" / "data" / "provider_logs"


def _calls(folder: str, stem: str) -> list[Any]:
    return list(read_cassette(CORPUS / folder / f"{stem}.yaml"))


def test_an_anthropic_answer_reads_as_signed_thinking_text_and_a_tool_call() -> None:
    first = _calls("anthropic", "test_anthropic_tool_with_thinking")[0]
    (answer,) = first.output
    assert isinstance(answer, LLMAssistantMessage)
    assert isinstance(answer.reasoning_content, tuple)
    thinking = answer.reasoning_content[0]
    assert isinstance(thinking, LLMThinking) and thinking.signature.startswith("EqEECkYICxgCKkAo3UA4")
    assert answer.content.startswith("I'll help you find the largest city")
    assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [
        ("toolu_01YGzqpRE16Vricda3Aqcejo", "get_user_country", "{}")
    ]
    assert first.extra["response"]["usage"]["output_tokens"] == 155
    assert first.request.params.thinking is True and first.request.tools[0].name == "get_user_country"


def test_a_gemini_call_without_id_gets_one_its_response_answers() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "weather?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"t": 21}}}]},
        ]
    }
    read = provider_named("gemini").read_request(body)
    _, model, result = read.messages
    assert isinstance(model, LLMAssistantMessage) and isinstance(result, LLMToolMessage)
    call = model.tool_calls[0]
    assert (call.id, call.name, call.arguments) == ("get_weather_0", "get_weather", '{"city":"Paris"}')
    assert (result.tool_call_id, result.name, result.content) == (call.id, call.name, '{"t":21}')
    recorded = _calls("gemini", "test_google_tool_output")[1]
    assert recorded.request.model == "gemini-2.0-flash"  # from the URL: the body names no model


def test_a_chat_answer_and_a_responses_answer_read_their_calls() -> None:
    chat = _calls("openai_chat", "test_openai_tool_output")[0]
    responses = _calls("openai_responses", "test_tool_output")[0]
    for call in (chat, responses):
        (answer,) = call.output
        assert answer.tool_calls and answer.tool_calls[0].name == "get_user_country"


def test_openrouter_reasoning_on_a_chat_answer_reads_as_its_reasoning() -> None:
    # OpenRouter names the field ``reasoning`` (https://openrouter.ai/docs/use-cases/reasoning-tokens).
    message = {"role": "assistant", "content": "4", "reasoning": "2 + 2 is 4."}
    body = {"model": "deepseek/deepseek-r1", "choices": [{"index": 0, "message": message}]}
    (answer,) = provider_named("openai").read_response(body).messages
    assert isinstance(answer, LLMAssistantMessage)
    assert (answer.content, answer.reasoning_content) == ("4", "2 + 2 is 4.")


def test_a_chat_custom_tool_call_reads_its_free_form_input_as_arguments() -> None:
    call = {"id": "call_1", "type": "custom", "custom": {"name": "math_exp", "input": "4 + 4"}}
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}
    (answer,) = provider_named("openai").read_response(body).messages
    assert isinstance(answer, LLMAssistantMessage)
    assert answer.tool_calls == (LLMToolCall("call_1", "math_exp", "4 + 4", {"type": "custom"}),)


def test_a_responses_reasoning_item_with_raw_reasoning_text_reads_as_that_text() -> None:
    reasoning = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Short."}],
        "content": [
            {"type": "reasoning_text", "text": "The user asks 2+2. "},
            {"type": "reasoning_text", "text": "4."},
        ],
    }
    text = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "4"}]}
    read = provider_named("openai-responses").read_response({"output": [reasoning, text]})
    (answer,) = read.messages
    assert isinstance(answer, LLMAssistantMessage)
    assert (answer.content, answer.reasoning_content) == ("4", "The user asks 2+2. \n4.")
    assert read.extra["unread_items"]["output[0]"] == reasoning  # the item itself is kept whole
    summary_only = dict(reasoning, content=[])
    (answer,) = provider_named("openai-responses").read_response({"output": [summary_only, text]}).messages
    assert isinstance(answer, LLMAssistantMessage) and answer.reasoning_content == "Short."
