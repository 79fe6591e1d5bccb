"""OpenTelemetry GenAI spans read into model calls and tool runs.

Every generation of the conventions still emitted by common instrumentations, newest first:

- ``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.system_instructions`` and
  ``gen_ai.tool.definitions`` (JSON attributes, semantic conventions 1.37 on);
- span events ``gen_ai.system.message``, ``gen_ai.user.message``, ``gen_ai.assistant.message``,
  ``gen_ai.tool.message`` and ``gen_ai.choice`` (1.28 to 1.36; pydantic-ai wrote the same as a JSON
  ``events`` attribute), and ``gen_ai.content.prompt``/``gen_ai.content.completion`` events (1.27);
- indexed ``gen_ai.prompt.N.*`` and ``gen_ai.completion.N.*`` attributes (OpenLLMetry), with its
  ``llm.request.functions.N.*`` tools.

A span of a model call with none of them (content capture is off by default) is a call whose content was
not captured: the assembler reports it. ``execute_tool`` spans are tool runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import IO, Any

from core.formats.events import ConversationKey, Event, ModelCall
from core.formats.genai_messages import MessageReader, indexed, joined
from core.formats.otlp import Span, read_spans
from core.formats.span_fields import loads, request_of, span_model_call, tool_execution
from core.llm.messages import LLMMessage

TOOL_OPERATIONS = ("execute_tool", "tool")
"""The semantic conventions' tool operation, and the one Latitude's SDK writes."""
NOT_MODEL_CALLS = ("execute_tool", "tool", "embeddings", "create_agent", "invoke_agent")
"""Operations that are not a model call: agent spans repeat their calls' messages, embeddings have none."""
NOT_CHAT_REQUESTS = ("embedding", "rerank")
"""OpenLLMetry's ``llm.request.type`` values that are not a model call: an embedding's prompts are token ids."""
ENTITY_SPAN_KINDS = ("workflow", "task", "agent", "tool")
"""OpenLLMetry's ``traceloop.span.kind`` of framework spans: CrewAI's agent span names its model, yet its calls
are spans of their own."""

_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_KEPT_PREFIXES = (
    "gen_ai.usage.",
    "gen_ai.response.",
    "llm.usage.",
    "gen_ai.request.frequency_penalty",
    "gen_ai.request.presence_penalty",
    "gen_ai.request.seed",
)


def conversation_key(span: Span) -> ConversationKey:
    """The span's conversation (``gen_ai.conversation.id``, else a ``session.id`` on the span or resource)."""
    for name in ("gen_ai.conversation.id", "session.id"):
        value = span.attributes.get(name) or span.resource.get(name)
        if isinstance(value, str) and value:
            return ConversationKey(conversation=value)
    return ConversationKey()


def _from_events(span: Span, reader: MessageReader) -> tuple[list[LLMMessage], list[LLMMessage]] | None:
    events: list[tuple[str, dict[str, Any]]] = [(e.name, e.attributes) for e in span.events]
    listed = loads(span.attributes.get("events"))
    if isinstance(listed, list):
        events += [(str(e.get("event.name", "")), e) for e in listed if isinstance(e, dict)]
    sent: list[LLMMessage] = []
    answered: list[LLMMessage] = []
    for name, attrs in events:
        if name in _EVENT_ROLES:
            body = loads(attrs.get("event.body", attrs.get("body"))) or attrs
            item = {"role": _EVENT_ROLES[name], **(body if isinstance(body, dict) else {"content": body})}
            sent.extend(reader.message(item))
        elif name == "gen_ai.choice":
            body = loads(attrs.get("event.body", attrs.get("body"))) or attrs
            message = loads(body.get("message")) if isinstance(body, dict) else None
            answered.extend(reader.message({"role": "assistant", **message} if isinstance(message, dict) else body))
        elif name == "gen_ai.content.prompt":
            sent.extend(reader.messages(attrs.get("gen_ai.prompt")))
        elif name == "gen_ai.content.completion":
            answered.extend(reader.messages(attrs.get("gen_ai.completion")))
    return (sent, answered) if sent or answered else None


def _messages(span: Span, reader: MessageReader) -> tuple[tuple[LLMMessage, ...] | None, tuple[LLMMessage, ...] | None]:
    attrs = span.attributes
    if "gen_ai.input.messages" in attrs or "gen_ai.output.messages" in attrs:
        system = attrs.get("gen_ai.system_instructions", attrs.get("gen_ai.system.instructions"))
        sent = (
            tuple(reader.with_system(system, reader.history(attrs["gen_ai.input.messages"], span.trace_id)))
            if "gen_ai.input.messages" in attrs
            else None
        )
        out = attrs.get("gen_ai.output.messages")
        return sent, None if out is None else tuple(reader.messages(out))
    prompts, completions = indexed(attrs, "gen_ai.prompt."), indexed(attrs, "gen_ai.completion.")
    if prompts or completions:
        # A completion is the model's answer whatever role it names: OpenLLMetry's LangChain instrumentation
        # writes "unknown" for a reply whose message type it does not map.
        return (
            joined(reader.message(p) for p in prompts) if prompts else None,
            joined(reader.message({**c, "role": "assistant"}) for c in completions) if completions else None,
        )
    from_events = _from_events(span, reader)
    if from_events is not None:
        sent_list, answered_list = from_events
        return (tuple(sent_list) if sent_list else None, tuple(answered_list) if answered_list else None)
    if "gen_ai.prompt" in attrs or "gen_ai.completion" in attrs:
        sent_any, out_any = attrs.get("gen_ai.prompt"), attrs.get("gen_ai.completion")
        return (
            None if sent_any is None else tuple(reader.messages(sent_any)),
            None if out_any is None else tuple(reader.messages(out_any)),
        )
    return None, None


def is_model_call(span: Span) -> bool:
    """Whether a span is a GenAI model call (by its operation, or by the message attributes it carries)."""
    attrs = span.attributes
    operation = attrs.get("gen_ai.operation.name")
    if operation in NOT_MODEL_CALLS:
        return False
    if attrs.get("llm.request.type") in NOT_CHAT_REQUESTS or attrs.get("traceloop.span.kind") in ENTITY_SPAN_KINDS:
        return False
    return (
        operation is not None
        or "gen_ai.request.model" in attrs
        or any(k.startswith(("gen_ai.prompt", "gen_ai.input.messages")) for k in attrs)
    )


def _tools(attrs: dict[str, Any]) -> Any:
    tools = loads(attrs.get("gen_ai.tool.definitions"))
    if tools:
        return tools
    functions = indexed(attrs, "llm.request.functions.")
    return [{**f, "parameters": loads(f.get("parameters"))} if "parameters" in f else f for f in functions]


def model_call(span: Span, path: str, reader: MessageReader) -> ModelCall:
    """A GenAI model-call span as a model call."""
    attrs = span.attributes
    reader.unplaced = []
    sent, answered = _messages(span, reader)
    extra: dict[str, Any] = {k: v for k, v in attrs.items() if k.startswith(_KEPT_PREFIXES)}
    stop = attrs.get("gen_ai.request.stop_sequences")
    request = request_of(
        system=attrs.get("gen_ai.provider.name", attrs.get("gen_ai.system")),
        model=attrs.get("gen_ai.request.model", attrs.get("gen_ai.response.model")),
        tools=_tools(attrs),
        params={
            "max_tokens": attrs.get("gen_ai.request.max_tokens"),
            "temperature": attrs.get("gen_ai.request.temperature"),
            "top_p": attrs.get("gen_ai.request.top_p"),
            "stop": list(stop) if isinstance(stop, list | tuple) else stop,
        },
        extra=extra,
    )
    key = conversation_key(span)
    return span_model_call(span, path, key, sent, answered, request=request, extra=extra, unplaced=reader.unplaced)


def span_events(span: Span, path: str, reader: MessageReader) -> Iterator[Event]:
    """The event a GenAI span is, if any."""
    attrs = span.attributes
    if attrs.get("gen_ai.operation.name") in TOOL_OPERATIONS:
        run = tool_execution(
            span,
            path,
            conversation_key(span),
            name=attrs.get("gen_ai.tool.name"),
            call_id=attrs.get("gen_ai.tool.call.id"),
            arguments=attrs.get("gen_ai.tool.call.arguments"),
            result=attrs.get("gen_ai.tool.call.result", attrs.get("gen_ai.tool.result.value")),
        )
        failed = attrs.get("gen_ai.tool.result.is_error") in (True, "true")
        yield replace(run, is_error=True) if failed else run
    elif is_model_call(span):
        yield model_call(span, path, reader)


def read_genai(stream: IO[bytes], path: str) -> Iterator[Event]:
    """The events of an OTLP file's GenAI spans (other spans are not model calls and are passed over)."""
    reader = MessageReader()
    for span in read_spans(stream, path):
        yield from span_events(span, path, reader)
