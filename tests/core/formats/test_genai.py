"""The older GenAI attribute generations still emitted by common instrumentations read like the current one:
span events (``gen_ai.user.message``, ``gen_ai.choice``), pydantic-ai's JSON ``events`` attribute, and the
indexed ``gen_ai.prompt.N.*`` with OpenLLMetry's tools."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from core.formats.genai import is_model_call, model_call
from core.formats.genai_messages import MessageReader
from core.formats.otlp import Span, SpanEvent
from core.llm.messages import LLMAssistantMessage, LLMMessage, LLMSystemMessage, LLMToolMessage, LLMUserMessage
from tests.core.formats.summary import summary

T = datetime(2026, 1, 1, tzinfo=UTC)


def _span(attributes: dict[str, Any], events: list[SpanEvent] | None = None) -> Span:
    return Span("t" * 32, "s" * 16, None, "chat", T, T, {"gen_ai.operation.name": "chat", **attributes}, events or [])


def _shape(messages: tuple[LLMMessage, ...] | None) -> list[tuple[str, str]]:
    out = []
    for m in messages or ():
        if isinstance(m, LLMUserMessage):
            out.append(("user", m.content[0].text))  # type: ignore[union-attr]
        elif isinstance(m, LLMAssistantMessage):
            out.append(("assistant", m.content + "".join(f"[{c.name}:{c.arguments}]" for c in m.tool_calls)))
        elif isinstance(m, LLMToolMessage):
            out.append(("tool", f"{m.tool_call_id}={m.content}"))
        elif isinstance(m, LLMSystemMessage):
            out.append(("system", m.content))
    return out


EXPECTED_IN = [("system", "Be brief."), ("user", "Weather?"), ("assistant", '[weather:{"city": "Oslo"}]')]
EXPECTED_IN += [("tool", "c1=cold")]
EXPECTED_OUT = [("assistant", "Cold.")]


def test_span_events_of_semantic_conventions_1_28_are_messages() -> None:
    events = [
        SpanEvent("gen_ai.system.message", T, {"content": "Be brief."}),
        SpanEvent("gen_ai.user.message", T, {"content": "Weather?"}),
        SpanEvent(
            "gen_ai.assistant.message",
            T,
            {
                "tool_calls": json.dumps(
                    [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": {"city": "Oslo"}}}]
                )
            },
        ),
        SpanEvent("gen_ai.tool.message", T, {"content": "cold", "id": "c1"}),
        SpanEvent("gen_ai.choice", T, {"message": json.dumps({"role": "assistant", "content": "Cold."})}),
    ]
    call = model_call(_span({}, events), "f.json", MessageReader())
    assert _shape(call.input) == EXPECTED_IN
    assert _shape(call.output) == EXPECTED_OUT


def test_pydantic_ai_events_attribute_is_read_as_events() -> None:
    events = [
        {"event.name": "gen_ai.system.message", "content": "Be brief.", "role": "system"},
        {"event.name": "gen_ai.user.message", "content": "Weather?", "role": "user"},
        {
            "event.name": "gen_ai.assistant.message",
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}
            ],
        },
        {"event.name": "gen_ai.tool.message", "content": "cold", "role": "tool", "id": "c1"},
        {"event.name": "gen_ai.choice", "index": 0, "message": {"role": "assistant", "content": "Cold."}},
    ]
    call = model_call(_span({"events": json.dumps(events)}), "f.json", MessageReader())
    assert _shape(call.input) == EXPECTED_IN
    assert _shape(call.output) == EXPECTED_OUT


def test_indexed_prompt_attributes_and_openllmetry_functions_are_read() -> None:
    attributes = {
        "gen_ai.system": "anthropic",
        "gen_ai.request.model": "claude-x",
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "Be brief.",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": "Weather?",
        "gen_ai.prompt.2.role": "assistant",
        "gen_ai.prompt.2.tool_calls.0.id": "c1",
        "gen_ai.prompt.2.tool_calls.0.name": "weather",
        "gen_ai.prompt.2.tool_calls.0.arguments": '{"city": "Oslo"}',
        "gen_ai.prompt.3.role": "tool",
        "gen_ai.prompt.3.content": "cold",
        "gen_ai.prompt.3.tool_call_id": "c1",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "Cold.",
        "llm.request.functions.0.name": "weather",
        "llm.request.functions.0.parameters": json.dumps(
            {"type": "object", "properties": {"city": {"type": "string"}}}
        ),
    }
    call = model_call(_span(attributes), "f.json", MessageReader())
    assert _shape(call.input) == EXPECTED_IN
    assert _shape(call.output) == EXPECTED_OUT
    assert call.request is not None
    assert (call.request.provider, call.request.model) == ("anthropic", "claude-x")
    assert [t.name for t in call.request.tools] == ["weather"]


def test_a_completion_whose_role_was_not_recognised_is_the_models_answer() -> None:
    # OpenLLMetry's LangChain instrumentation 0.49.6 writes role "unknown" for the reply of a LangGraph agent's
    # second call (tests/formats/data/otlp/galileo_langgraph_weather_call2.pb): a completion is the model's output.
    attributes = {
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "Weather?",
        "gen_ai.completion.0.role": "unknown",
        "gen_ai.completion.0.content": "Cold.",
        "gen_ai.completion.0.finish_reason": "stop",
    }
    call = model_call(_span(attributes), "f.json", MessageReader())
    assert _shape(call.output) == EXPECTED_OUT


def test_openllmetry_embedding_and_agent_spans_are_not_model_calls() -> None:
    # OpenLLMetry 0.49.6 (tests/formats/data/otlp/galileo_*): an embeddings call names its kind in llm.request.type
    # and sends token ids as gen_ai.prompt.N.content; CrewAI's agent span names its model but carries no messages.
    embedding: dict[str, Any] = {"llm.request.type": "embedding", "gen_ai.request.model": "text-embedding-3-small"}
    embedding["gen_ai.prompt.0.content"] = [22333, 6975]
    agent = {"traceloop.span.kind": "agent", "gen_ai.request.model": "gpt-4o-mini"}
    chat = {"llm.request.type": "chat", "gen_ai.request.model": "gpt-4o-mini"}
    spans = [Span("t" * 32, "s" * 16, None, "x", T, T, attributes, []) for attributes in (embedding, agent, chat)]
    assert [is_model_call(span) for span in spans] == [False, False, True]


def test_a_responses_api_turn_resent_as_one_message_per_item_continues_the_conversation() -> None:
    # opentelemetry-instrumentation-genai-openai 1.3b0 on client.responses.create: the call's output is one assistant
    # message (text and function call); the next call resends the turn's items as messages of their own.
    from core.formats.records import assemble

    call = {"arguments": {"city": "Paris"}, "name": "weather", "id": "call_1", "type": "tool_call"}
    asked = [{"role": "user", "parts": [{"content": "Weather in Paris?", "type": "text"}], "name": None}]
    first = {
        "gen_ai.input.messages": json.dumps(asked),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"content": "Let me check.", "type": "text"}, call], "name": None}]
        ),
    }
    items = [
        {"role": "assistant", "parts": [{"content": "Let me check.", "type": "text"}], "name": None},
        {"role": "assistant", "parts": [call], "name": None},
        {"role": "tool", "parts": [{"response": "sunny", "id": "call_1", "type": "tool_call_response"}], "name": None},
    ]
    second = {
        "gen_ai.input.messages": json.dumps(asked + items),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"content": "Sunny.", "type": "text"}]}]),
    }
    reader = MessageReader()
    calls = [model_call(_span(attrs), "f.json", reader) for attrs in (first, second)]
    assert _shape(calls[1].input)[1] == ("assistant", 'Let me check.[weather:{"city": "Paris"}]')
    conversations = assemble(calls).conversations
    assert [summary(c.messages) for c in conversations] == [
        ["user:text", "  assistant:text+1calls", "  tool:call_1", "  assistant:text"]
    ]
