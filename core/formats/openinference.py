"""OpenInference spans (Arize Phoenix's conventions) read into model calls and tool runs.

An ``LLM`` span flattens its messages into indexed attributes
(https://github.com/Arize-ai/openinference/blob/main/spec/semantic_conventions.md):
``llm.input_messages.N.message.role``, ``.message.content`` or ``.message.contents.M.message_content.*``,
``.message.tool_calls.M.tool_call.{id,function.name,function.arguments}``, ``.message.tool_call_id``; the
same under ``llm.output_messages``; tools as ``llm.tools.N.tool.json_schema``; the parameters as the JSON
``llm.invocation_parameters``; ``session.id`` names the conversation. A ``TOOL`` span is a tool run:
``tool.name``, ``tool_call.id`` (or ``tool.id``), ``input.value`` and ``output.value``.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import IO, Any

from core.formats.events import ConversationKey, Event, ModelCall, marked_incomplete
from core.formats.genai_messages import Flat, MessageReader, flat_entries, joined, nested
from core.formats.otlp import Span, dropped_reason, read_spans
from core.formats.phoenix_spans import looks_like_phoenix, read_phoenix_spans
from core.formats.span_fields import loads, request_of, span_model_call, tool_execution
from core.llm.messages import LLMMessage

SPAN_KIND = "openinference.span.kind"
SNIFF_HEAD = 4096
_KEPT_PREFIXES = ("llm.token_count.", "llm.cost.", "annotation", "evaluation", "llm.finish_reason", "tag.tags")
_SENT, _ANSWERED, _TOOLS = "llm.input_messages.", "llm.output_messages.", "llm.tools."


def conversation_key(span: Span) -> ConversationKey:
    """``session.id`` on the span or its resource."""
    value = span.attributes.get("session.id") or span.resource.get("session.id")
    return ConversationKey(conversation=value) if isinstance(value, str) and value else ConversationKey()


def _content_part(item: Any) -> dict[str, Any] | None:
    content = item.get("message_content") if isinstance(item, dict) else None
    if not isinstance(content, dict):
        return None
    kind = content.get("type")
    if kind in ("text", "reasoning"):
        return {"type": kind, "content": content.get("text", "")}
    for medium in ("image", "audio", "video"):
        inner = content.get(medium)
        leaf = inner.get(medium) if isinstance(inner, dict) else None
        if isinstance(leaf, dict) and isinstance(leaf.get("url"), str):
            return {"type": "uri", "modality": medium, "uri": leaf["url"], "mime_type": leaf.get("mime_type")}
    return {"type": str(kind), **content} if kind != "tool_use" else None


def generic_message(flat: Any) -> dict[str, Any]:
    """One ``llm.*_messages.N`` entry as the chat-completions-like message ``MessageReader`` reads."""
    message = flat.get("message", {}) if isinstance(flat, dict) else {}
    out: dict[str, Any] = {"role": message.get("role") or "user"}
    contents = message.get("contents")
    if isinstance(contents, list) and contents:
        out["content"] = [p for p in (_content_part(c) for c in contents) if p is not None]
    else:
        out["content"] = message.get("content", "")
    calls = []
    for entry in message.get("tool_calls") or []:
        call = entry.get("tool_call", {}) if isinstance(entry, dict) else {}
        function = call.get("function", {}) if isinstance(call.get("function"), dict) else {}
        calls.append({"id": call.get("id"), "name": function.get("name", ""), "arguments": function.get("arguments")})
    if calls:
        out["tool_calls"] = calls
    for key in ("tool_call_id", "name"):
        if message.get(key):
            out[key] = message[key]
    return out


def _tools(entries: list[Flat]) -> list[Any]:
    tools = []
    for entry in map(nested, entries):
        tool = entry.get("tool", {}) if isinstance(entry, dict) else {}
        schema = loads(tool.get("json_schema"))
        if isinstance(schema, dict):
            tools.append(schema)
        elif tool.get("name"):
            tools.append(
                {
                    "name": tool["name"],
                    "description": tool.get("description", ""),
                    "parameters": loads(tool.get("parameters")) or {"type": "object", "properties": {}},
                }
            )
    return tools


def _params(invocation: Any, extra: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(invocation, dict):
        return {}
    params = {
        "max_tokens": invocation.get(
            "max_tokens", invocation.get("max_completion_tokens", invocation.get("max_output_tokens"))
        ),
        "temperature": invocation.get("temperature"),
        "top_p": invocation.get("top_p"),
        "stop": invocation.get("stop", invocation.get("stop_sequences")),
    }
    known = (
        "max_tokens",
        "max_completion_tokens",
        "max_output_tokens",
        "temperature",
        "top_p",
        "stop",
        "stop_sequences",
        "model",
        "model_name",
        "tools",
        "messages",
        "stream",
        "input",
        "system",
    )
    rest = {k: v for k, v in invocation.items() if k not in known}
    if rest:
        extra["invocation_parameters"] = rest
    return params


def _entry_messages(reader: MessageReader, entry: Flat, answer: bool) -> list[LLMMessage]:
    message = generic_message(nested(entry))
    return reader.message({**message, "role": "assistant"} if answer else message)


def _messages(reader: MessageReader, entries: list[Flat], *, answer: bool) -> Iterator[list[LLMMessage]]:
    """Each flat ``llm.*_messages.N`` entry's messages; an entry resent unchanged is read once per reader."""
    prefix = _ANSWERED if answer else _SENT
    for entry in entries:
        yield reader.remembered((prefix, entry), partial(_entry_messages, reader, entry, answer))


def model_call(span: Span, path: str, reader: MessageReader) -> ModelCall:
    """An ``LLM`` span as a model call."""
    attrs = span.attributes
    reader.unplaced = []
    flat = flat_entries(attrs, (_SENT, _ANSWERED, _TOOLS))
    sent = joined(_messages(reader, flat[_SENT], answer=False)) if flat[_SENT] else None
    answered = joined(_messages(reader, flat[_ANSWERED], answer=True)) if flat[_ANSWERED] else None
    extra: dict[str, Any] = {k: v for k, v in attrs.items() if k.startswith(_KEPT_PREFIXES)}
    request = request_of(
        system=attrs.get("llm.system") or attrs.get("llm.provider"),
        model=attrs.get("llm.model_name", attrs.get("llm.request.model_name")),
        tools=_tools(flat[_TOOLS]),
        params=_params(loads(attrs.get("llm.invocation_parameters")), extra),
        extra=extra,
    )
    key = conversation_key(span)
    return span_model_call(span, path, key, sent, answered, request=request, extra=extra, unplaced=reader.unplaced)


def span_events(span: Span, path: str, reader: MessageReader) -> Iterator[Event]:
    """The event an OpenInference span is, if any (chains, agents and retrievers are not)."""
    attrs = span.attributes
    kind = attrs.get(SPAN_KIND)
    if kind == "LLM":
        yield model_call(span, path, reader)
    elif kind == "TOOL":
        yield tool_execution(
            span,
            path,
            conversation_key(span),
            name=attrs.get("tool.name") or attrs.get("tool_call.function.name"),
            call_id=attrs.get("tool_call.id") or attrs.get("tool.id"),
            arguments=attrs.get("tool_call.function.arguments", attrs.get("input.value")),
            result=attrs.get("output.value"),
        )


def read_openinference(stream: IO[bytes], path: str) -> Iterator[Event]:
    """The events of an OTLP file's OpenInference spans, or of a Phoenix span file's."""
    reader = MessageReader()
    peek = getattr(stream, "peek", None)
    head = peek(SNIFF_HEAD)[:SNIFF_HEAD] if peek is not None else b""
    spans = read_phoenix_spans(stream, path) if looks_like_phoenix(head) else read_spans(stream, path)
    for span in spans:
        yield from marked_incomplete(span_events(span, path, reader), dropped_reason(span))
