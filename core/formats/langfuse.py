"""Langfuse trace exports read into model calls: a trace with its observations, as Langfuse's API and its
``framework-traces`` test data hold them (``{"trace": {...}, "observations": [...]}``, or a list of them).

Each ``GENERATION`` observation is a model call. Its ``input`` and ``output`` are whatever the integration
sent (a JSON string or a value): chat messages (LangChain's with their ``additional_kwargs.tool_calls``),
GenAI parts messages (pydantic-ai), a ``{"messages": [...]}`` or ``{"prompt": ...}`` object. LangChain's
integration appends the tools offered as trailing ``tool`` messages holding a function definition: those are
read as the request's tools, not as results. ``sessionId`` names the conversation, the trace id its thread.
Usage, costs and scores are kept aside.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

import orjson

from core.errors import InputError
from core.formats.events import ConversationKey, Event, SourceRef, parse_time
from core.formats.genai_messages import MessageReader
from core.formats.span_fields import answer_of, loads, request_of, traced_call
from core.llm.messages import LLMMessage

_KEPT = ("usageDetails", "costDetails", "usage", "calculatedTotalCost", "level", "statusMessage")


def _is_tool_definition(item: Any) -> bool:
    content = item.get("content") if isinstance(item, dict) else None
    return (
        isinstance(item, dict)
        and item.get("role") == "tool"
        and isinstance(content, dict)
        and content.get("type") == "function"
        and isinstance(content.get("function"), dict)
    )


def _chat(item: Any) -> Any:
    """A LangChain message with its tool calls where chat messages keep them."""
    if isinstance(item, dict) and isinstance(item.get("additional_kwargs"), dict) and "tool_calls" not in item:
        calls = item["additional_kwargs"].get("tool_calls")
        if calls:
            return {**item, "tool_calls": calls}
    return item


def _messages(value: Any, reader: MessageReader, tools: list[Any]) -> list[LLMMessage] | None:
    value = loads(value)
    if value is None:
        return None
    if isinstance(value, dict) and "messages" in value:
        value = loads(value["messages"])
    elif isinstance(value, dict) and "prompt" in value and "role" not in value:
        value = [{"role": "user", "content": value["prompt"]}]
    items = value if isinstance(value, list) else [value]
    out: list[LLMMessage] = []
    for item in items:
        if _is_tool_definition(item):
            tools.append(item["content"])
            continue
        out.extend(reader.message(_chat(item)))
    return out


def _observations(document: Any) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for export in document if isinstance(document, list) else [document]:
        if not isinstance(export, dict):
            continue
        trace: dict[str, Any] = export["trace"] if isinstance(export.get("trace"), dict) else export
        observations = export.get("observations") or trace.get("observations") or []
        for observation in observations:
            if isinstance(observation, dict):
                yield trace, observation


def looks_like_langfuse(head: bytes) -> bool:
    """Whether a file's first bytes hold a Langfuse trace export."""
    return b'"observations"' in head and (b'"projectId"' in head or b'"traceId"' in head)


def read_langfuse(stream: IO[bytes], path: str) -> Iterator[Event]:
    """The model calls of a Langfuse export (read whole: an export is one trace or a page of them)."""
    try:
        document = orjson.loads(stream.read())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc}", source=path) from None
    reader = MessageReader()
    for trace, observation in _observations(document):
        if observation.get("type") != "GENERATION":
            continue
        reader.unplaced = []
        tools: list[Any] = []
        sent = _messages(observation.get("input"), reader, tools)
        answered = _messages(observation.get("output"), reader, [])
        extra: dict[str, Any] = {k: observation[k] for k in _KEPT if observation.get(k) not in (None, {}, "DEFAULT")}
        if trace.get("scores"):
            extra["scores"] = trace["scores"]
        params = loads(observation.get("modelParameters")) or {}
        request = request_of(
            system=None,
            model=observation.get("model"),
            tools=tools,
            params={
                "max_tokens": params.get("max_tokens", params.get("maxTokens")),
                "temperature": params.get("temperature"),
                "top_p": params.get("top_p"),
            }
            if isinstance(params, dict)
            else {},
            extra=extra,
        )
        session = trace.get("sessionId")
        conversation = session if isinstance(session, str) and session else None
        yield traced_call(
            SourceRef(path, None, str(observation.get("id") or "") or None, trace.get("id")),
            ConversationKey(conversation=conversation, thread=trace.get("id")),
            tuple(sent) if sent is not None else None,
            answer_of(answered),
            request=request,
            times=(parse_time(observation.get("startTime")), parse_time(observation.get("endTime"))),
            extra=extra,
            unplaced=reader.unplaced,
        )
