"""OTLP batches of agent conversations in OpenInference conventions, which Traceloupe and Arize Phoenix both read.

A conversation has ``TURNS`` turns; each turn is one trace, as an agent framework's instrumentation makes it: an
``AGENT`` span around three ``LLM`` spans and three ``TOOL`` spans. The first call asks for two tools at once, the
second for one more, the third answers; every call resends the whole history
(``llm.input_messages.N.message.*``, https://github.com/Arize-ai/openinference/blob/main/spec/semantic_conventions.md)
and, as the OpenAI instrumentation does, its request as ``input.value``. Every span carries ``session.id``: Phoenix
lists a conversation as a session, Traceloupe ties its five traces into one conversation.

Spans are exported as a ``BatchSpanProcessor`` shared by many agents running at once would export them: in the order
they end, the turns of all conversations interleaved (each conversation's first turn, then each one's second...),
``batch_spans`` to a request. So a conversation's turns arrive in different requests, as they would live.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

TURNS = 5
MODEL_CALLS_PER_TURN = 3
TOOL_SPANS_PER_TURN = 3
SPANS_PER_TURN = 1 + MODEL_CALLS_PER_TURN + TOOL_SPANS_PER_TURN
"""The agent span, its model calls and its tool runs."""
DEFAULT_BATCH_SPANS = 512
"""The OpenTelemetry SDK's ``BatchSpanProcessor`` default ``max_export_batch_size``."""
START_NS = 1_760_000_000_000_000_000
MODEL = "gpt-4o-mini"
PROJECT = "default"
WORDS = [
    "the",
    "agent",
    "looked",
    "up",
    "the",
    "weather",
    "and",
    "the",
    "flights",
    "then",
    "booked",
    "a",
    "table",
    "for",
    "two",
    "near",
    "the",
    "station",
]
TOOLS = {
    "search_flights": {"origin": "string", "destination": "string"},
    "get_weather": {"city": "string"},
    "book_table": {"place": "string", "people": "integer"},
}
SYSTEM = "You are a travel assistant. Use the tools to answer; be brief and exact. " * 4


def _text(seed: int, words: int) -> str:
    """Text that differs from one conversation and turn to the next, as real questions and answers do."""
    return f"#{seed} " + " ".join(WORDS[(seed * 7 + i) % len(WORDS)] for i in range(words))


def _id(width: int, *parts: object) -> bytes:
    """A stable id of ``width`` bytes, never all zero (OTLP refuses those)."""
    return hashlib.blake2b(repr(parts).encode(), digest_size=width).digest()[:-1] + b"\x01"


def session_id(conversation: int) -> str:
    """The ``session.id`` of conversation ``conversation``: the conversation id in both tools."""
    return f"session-{conversation:06d}"


def _kv(key: str, value: str | int) -> KeyValue:
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def _message_attributes(prefix: str, index: int, message: dict[str, Any]) -> list[KeyValue]:
    """One chat message as OpenInference's flattened ``<prefix>.N.message.*`` attributes."""
    base = f"{prefix}.{index}.message"
    out = [_kv(f"{base}.role", message["role"])]
    if message.get("content"):
        out.append(_kv(f"{base}.content", message["content"]))
    for j, call in enumerate(message.get("tool_calls", [])):
        call_base = f"{base}.tool_calls.{j}.tool_call"
        out += [
            _kv(f"{call_base}.id", call["id"]),
            _kv(f"{call_base}.function.name", call["function"]["name"]),
            _kv(f"{call_base}.function.arguments", call["function"]["arguments"]),
        ]
    if message.get("tool_call_id"):
        out.append(_kv(f"{base}.tool_call_id", message["tool_call_id"]))
    return out


def _tool_schemas() -> list[KeyValue]:
    out = []
    for i, (name, fields) in enumerate(TOOLS.items()):
        schema = {
            "type": "function",
            "function": {
                "name": name,
                "description": f"{name.replace('_', ' ')} for the traveller",
                "parameters": {"type": "object", "properties": {k: {"type": t} for k, t in fields.items()}},
            },
        }
        out.append(_kv(f"llm.tools.{i}.tool.json_schema", json.dumps(schema)))
    return out


@dataclass(slots=True)
class _Clock:
    now: int

    def span(self, duration_ms: int) -> tuple[int, int]:
        start = self.now
        self.now += duration_ms * 1_000_000
        return start, self.now


def _span(
    trace: bytes, span_id: bytes, parent: bytes, name: str, times: tuple[int, int], attrs: list[KeyValue]
) -> Span:
    return Span(
        trace_id=trace,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=times[0],
        end_time_unix_nano=times[1],
        attributes=attrs,
        status=Status(code=Status.STATUS_CODE_OK),
    )


def _call(history: list[dict[str, Any]], answer: dict[str, Any], session: str, tokens: int) -> list[KeyValue]:
    attrs = [
        _kv("openinference.span.kind", "LLM"),
        _kv("session.id", session),
        _kv("llm.model_name", MODEL),
        _kv("llm.provider", "openai"),
        _kv("llm.system", "openai"),
        _kv("llm.invocation_parameters", json.dumps({"temperature": 0.2, "max_tokens": 512})),
        _kv("input.value", json.dumps({"model": MODEL, "messages": history})),
        _kv("input.mime_type", "application/json"),
        _kv("output.value", json.dumps({"choices": [{"message": answer}]})),
        _kv("output.mime_type", "application/json"),
        _kv("llm.token_count.prompt", tokens),
        _kv("llm.token_count.completion", 40),
        _kv("llm.token_count.total", tokens + 40),
        *_tool_schemas(),
    ]
    for i, message in enumerate(history):
        attrs += _message_attributes("llm.input_messages", i, message)
    attrs += _message_attributes("llm.output_messages", 0, answer)
    return attrs


def _tool_call(conversation: int, turn: int, name: str) -> dict[str, Any]:
    arguments = {key: _text(conversation + turn, 2) for key in TOOLS[name]}
    call_id = f"call_{conversation}_{turn}_{name}"
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def turn_spans(conversation: int, turn: int, history: list[dict[str, Any]], clock: _Clock) -> list[Span]:
    """One turn's trace, its spans in the order they end (the agent span last); ``history`` grows by the turn."""
    session = session_id(conversation)
    trace = _id(16, "trace", conversation, turn)
    agent_id = _id(8, "agent", conversation, turn)
    agent_start = clock.now
    question = _text(conversation * 31 + turn, 24)
    history.append({"role": "user", "content": question})
    plan = [["search_flights", "get_weather"], ["book_table"], []]
    spans: list[Span] = []
    for step, tools in enumerate(plan):
        calls = [_tool_call(conversation, turn, name) for name in tools]
        answer: dict[str, Any] = {"role": "assistant", "content": "" if calls else _text(conversation + step, 40)}
        if calls:
            answer["tool_calls"] = calls
        times = clock.span(800)
        attrs = _call(list(history), answer, session, 300 + 40 * len(history))
        spans.append(
            _span(trace, _id(8, "llm", conversation, turn, step), agent_id, f"ChatCompletion {step}", times, attrs)
        )
        history.append(answer)
        for call in calls:
            result = _text(conversation * 3 + turn + len(call["id"]), 30)
            tool_attrs = [
                _kv("openinference.span.kind", "TOOL"),
                _kv("session.id", session),
                _kv("tool.name", call["function"]["name"]),
                _kv("tool_call.id", call["id"]),
                _kv("input.value", call["function"]["arguments"]),
                _kv("output.value", result),
            ]
            tool_id = _id(8, "tool", call["id"])
            spans.append(_span(trace, tool_id, agent_id, call["function"]["name"], clock.span(120), tool_attrs))
            history.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    agent_attrs = [
        _kv("openinference.span.kind", "AGENT"),
        _kv("session.id", session),
        _kv("input.value", question),
        _kv("output.value", history[-1]["content"]),
    ]
    spans.append(_span(trace, agent_id, b"", "agent.run", (agent_start, clock.span(5)[1]), agent_attrs))
    return spans


def _request(spans: list[Span]) -> bytes:
    resource = ResourceSpans(
        resource={"attributes": [_kv("service.name", "travel-agent"), _kv("openinference.project.name", PROJECT)]},
        scope_spans=[ScopeSpans(scope={"name": "openinference.instrumentation.bench"}, spans=spans)],
    )
    return bytes(ExportTraceServiceRequest(resource_spans=[resource]).SerializeToString())


def turns(conversations: int) -> Iterator[list[Span]]:
    """Every turn's spans, the first turns of all conversations first, as agents running at once end them."""
    histories = [[{"role": "system", "content": SYSTEM}] for _ in range(conversations)]
    clocks = [_Clock(START_NS + c * 1_000_000_000) for c in range(conversations)]
    for turn in range(TURNS):
        for c in range(conversations):
            yield turn_spans(c, turn, histories[c], clocks[c])


def otlp_batches(conversations: int, batch_spans: int = DEFAULT_BATCH_SPANS) -> list[bytes]:
    """The protobuf ``ExportTraceServiceRequest`` bodies, ``batch_spans`` spans each (the last may hold fewer)."""
    bodies: list[bytes] = []
    pending: list[Span] = []
    for spans in turns(conversations):
        for span in spans:
            pending.append(span)
            if len(pending) == batch_spans:
                bodies.append(_request(pending))
                pending = []
    if pending:
        bodies.append(_request(pending))
    return bodies
