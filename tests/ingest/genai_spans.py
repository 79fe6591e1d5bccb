"""Agent conversations recorded as GenAI spans by the real OpenTelemetry SDK, and the OTLP bodies they make.

Each conversation is one trace: an agent span, then per turn a model call that asks for a tool, the tool's
span, and a model call that answers, each call resending the history (semantic conventions 1.37 attributes:
``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.conversation.id``). Times are given, so the
same arguments give the same spans but for their random ids.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import set_span_in_context

AGENT_OPERATION = "gen_ai.operation.name"
START_NS = 1_760_000_000_000_000_000
STEP_NS = 1_000_000_000


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def record(tracer_provider: TracerProvider, conversations: int, turns: int = 2, offset: int = 0) -> None:
    """Record ``conversations`` agent conversations through ``tracer_provider``."""
    tracer = tracer_provider.get_tracer("traceloupe.tests")
    for c in range(conversations):
        cid = f"conv-{offset + c}"
        clock = START_NS + (offset + c) * 1000 * STEP_NS
        history: list[dict[str, Any]] = [{"role": "system", "parts": [{"type": "text", "content": "Be brief."}]}]
        agent = tracer.start_span("invoke_agent", start_time=clock, attributes={AGENT_OPERATION: "invoke_agent"})
        context = set_span_in_context(agent)
        for t in range(turns):
            history.append(_text("user", f"{cid} question {t}: weather in city {t}?"))
            call_id = f"call-{cid}-{t}"
            asked = {
                "role": "assistant",
                "parts": [{"type": "tool_call", "id": call_id, "name": "weather", "arguments": {"city": f"city {t}"}}],
                "finish_reason": "tool_call",
            }
            clock = _model_call(tracer, context, cid, history, [asked], clock)
            history.append(asked)
            tool = tracer.start_span(
                "execute_tool weather",
                context=context,
                start_time=clock,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "weather",
                    "gen_ai.tool.call.id": call_id,
                    "gen_ai.tool.call.result": f"sunny in city {t}",
                    "gen_ai.conversation.id": cid,
                },
            )
            clock += STEP_NS
            tool.end(end_time=clock)
            result = {"type": "tool_call_response", "id": call_id, "response": f"sunny in city {t}"}
            history.append({"role": "tool", "parts": [result]})
            answer = {**_text("assistant", f"It is sunny in city {t}."), "finish_reason": "stop"}
            clock = _model_call(tracer, context, cid, history, [answer], clock)
            history.append(answer)
        agent.end(end_time=clock + STEP_NS)


def _model_call(
    tracer: Any, context: Any, cid: str, sent: list[dict[str, Any]], answered: list[dict[str, Any]], clock: int
) -> int:
    span = tracer.start_span(
        "chat gpt-4o",
        context=context,
        start_time=clock,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.request.temperature": 0.2,
            "gen_ai.conversation.id": cid,
            "gen_ai.input.messages": json.dumps(sent),
            "gen_ai.output.messages": json.dumps(answered),
            "gen_ai.tool.definitions": json.dumps(
                [{"type": "function", "name": "weather", "parameters": {"type": "object", "properties": {}}}]
            ),
        },
    )
    clock += STEP_NS
    span.end(end_time=clock)
    return clock


def recorded_spans(conversations: int, turns: int = 2) -> list[ReadableSpan]:
    """The spans of ``conversations`` agent conversations, as the SDK hands them to an exporter."""
    memory = InMemorySpanExporter()
    provider = tracer_provider(memory)
    record(provider, conversations, turns)
    provider.shutdown()
    return list(memory.get_finished_spans())


class CountingIds(IdGenerator):
    """Ids from a counter: unique in a test run whatever seeds ``random`` (Hypothesis does, for each example)."""

    _next = itertools.count(1)

    def generate_span_id(self) -> int:
        return next(self._next)

    def generate_trace_id(self) -> int:
        return next(self._next) << 64 | 1


def tracer_provider(*exporters: SpanExporter) -> TracerProvider:
    """A tracer provider (not the global one) that hands each span to each of ``exporters`` as it ends."""
    provider = TracerProvider(
        resource=Resource.create({"service.name": "traceloupe-tests"}), id_generator=CountingIds()
    )
    for exporter in exporters:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def otlp_body(spans: Sequence[ReadableSpan]) -> bytes:
    """The OTLP/protobuf ``ExportTraceServiceRequest`` the exporter sends for ``spans``."""
    return bytes(encode_spans(spans).SerializeToString())


def limited_span_body(conversation: str, turns: int, max_attributes: int) -> bytes:
    """One model call resending ``turns`` questions as OpenLLMetry's ``gen_ai.prompt.N.*`` attributes, recorded by
    the real SDK keeping ``max_attributes`` per span: past it the oldest are evicted and the span counts them."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_attributes=max_attributes), id_generator=CountingIds())
    provider.add_span_processor(SimpleSpanProcessor(memory))
    span = provider.get_tracer("traceloupe.tests").start_span("chat gpt-4o", start_time=START_NS)
    span.set_attribute("gen_ai.operation.name", "chat")
    span.set_attribute("gen_ai.system", "openai")
    span.set_attribute("gen_ai.request.model", "gpt-4o")
    span.set_attribute("gen_ai.conversation.id", conversation)
    for turn in range(turns):  # the oldest messages are set first, so evicted first
        span.set_attribute(f"gen_ai.prompt.{turn}.role", "user")
        span.set_attribute(f"gen_ai.prompt.{turn}.content", f"question {turn}")
    span.set_attribute("gen_ai.completion.0.role", "assistant")
    span.set_attribute("gen_ai.completion.0.content", "the answer")
    span.end(end_time=START_NS + STEP_NS)
    provider.shutdown()
    return otlp_body(memory.get_finished_spans())
