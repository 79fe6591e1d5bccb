"""What the span conventions (OpenTelemetry GenAI, OpenInference) share once a span is read: JSON-in-a-string
values, arguments as text, the provider a system name means, and the request context a span describes."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from itertools import pairwise
from typing import Any, TypeVar

import orjson

from core.errors import InputError
from core.formats.events import ModelCall, SourceRef, ToolExecution
from core.formats.otlp import Span
from core.llm.messages import LLMAssistantMessage, LLMMessage
from core.providers.request import ToolSpec
from core.request_context.shapes import read_tool_choice, read_tools
from core.request_context.stored import StoredRequest, read_params

POOL_CHARS = 4 << 20
"""Characters of text a pool holds at most (then it starts again): those of the conversations being read."""


class TextPool:
    """One string object per distinct text met lately: resent histories repeat every earlier message, and a
    conversation's events are held until they are assembled. Bounded, so a large file's distinct texts are not
    all held until its end."""

    def __init__(self, limit: int = POOL_CHARS) -> None:
        self.texts: dict[str, str] = {}
        self.chars = 0
        self.limit = limit

    def __call__(self, text: str) -> str:
        known = self.texts.get(text)
        if known is not None:
            return known
        if self.chars + len(text) > self.limit:
            self.texts.clear()
            self.chars = 0
        self.texts[text] = text
        self.chars += len(text)
        return text


_NO_PARAMS = read_params(None)
"""The generation parameters of a call that names none."""
_NO_TOOLS: tuple[ToolSpec, ...] = ()
_Read = TypeVar("_Read")


def loads(value: Any) -> Any:
    """A value that may be JSON written into a string attribute; the value itself when it is not."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def arguments_text(value: Any) -> str:
    """Tool-call arguments as the JSON text the stored format keeps: objects are written, text kept as it is."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def content_text(value: Any) -> str:
    """A result or content value as text (structured values as JSON)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _number(value: Any) -> Any:
    """A parameter some instrumentations write as text (Spring AI's ``"0.7"``) as the number it is."""
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
        return int(number) if number.is_integer() and "." not in value else number
    return value


def provider_of(system: Any) -> str | None:
    """The Traceloupe provider a span's system or provider name means (``gcp.gemini``: its last part), or None."""
    if not isinstance(system, str) or not system:
        return None
    from core.providers.registry import provider_called  # imported only once a span names a system

    for name in (system, system.rsplit(".", 1)[-1], system.split(".", 1)[0]):
        dialect = provider_called(name)
        if dialect is not None:
            return dialect.name
    return None


def source_of(span: Span, path: str) -> SourceRef:
    """Where a span is: the file, the line of its batch, its span id and trace."""
    return SourceRef(path=path, line=span.line, source_id=span.span_id or None, trace=span.trace_id or None)


def request_of(
    *,
    system: Any,
    model: Any,
    tools: Any,
    params: Mapping[str, Any],
    extra: dict[str, Any],
    tool_choice: Any = None,
) -> StoredRequest | None:
    """The request context of a call, or None when the span says nothing of one; what cannot be read into it is
    kept in ``extra`` (so reported), not dropped."""
    provider = provider_of(system)
    if system and provider is None:
        extra["system"] = system
    read_tools_ = _read_or_keep("tools", tools, read_tools, _NO_TOOLS, extra) if tools else ()
    clean = {k: _number(v) if k != "stop" else v for k, v in params.items() if v is not None}
    generation = _read_or_keep("params", clean, read_params, _NO_PARAMS, extra) if clean else _NO_PARAMS
    if provider is None and not isinstance(model, str) and not read_tools_ and generation == _NO_PARAMS:
        return None
    choice = None if tool_choice is None else _read_or_keep("tool_choice", tool_choice, read_tool_choice, None, extra)
    return StoredRequest(
        conversation_id="",
        provider=provider,
        model=model if isinstance(model, str) and model else None,
        tools=read_tools_,
        tool_choice=choice,
        params=generation,
    )


def _read_or_keep(field: str, value: Any, read: Callable[[Any], _Read], empty: _Read, extra: dict[str, Any]) -> _Read:
    """``read(value)``; or, when it cannot be read, ``empty``, with the value and why kept in ``extra``."""
    try:
        return read(value)
    except InputError as exc:
        extra[field], extra[f"{field}_error"] = value, str(exc)
        return empty


def _joinable(turn: LLMAssistantMessage, item: LLMAssistantMessage) -> bool:
    """Whether ``item`` continues ``turn``: its function calls after the turn's text, or more calls after calls;
    never two texts or reasoning after calls (joined, their order would be lost)."""
    if turn.function_call or item.function_call or turn.tfl_scripts or item.tfl_scripts:
        return False
    if turn.tool_calls:
        return not item.content and not item.reasoning_content
    return not (turn.content and item.content) and not (turn.reasoning_content and item.reasoning_content)


_TWO_TURNS = (LLMAssistantMessage, LLMAssistantMessage)


def one_turn_each(messages: tuple[LLMMessage, ...] | None) -> tuple[LLMMessage, ...] | None:
    """Consecutive assistant messages as the one turn they are: the Responses API lists a turn's reasoning, text
    and each function call as items of their own, which instrumentations resend as messages of their own
    (opentelemetry-instrumentation-genai-openai, openinference-instrumentation-openai), while the call that
    answered recorded one message."""
    if not messages:
        return messages
    if _TWO_TURNS not in pairwise(map(type, messages)):  # no assistant message follows another: checked in C
        return messages
    out: list[LLMMessage] = []
    for message in messages:
        turn = out[-1] if out else None
        if (
            isinstance(message, LLMAssistantMessage)
            and isinstance(turn, LLMAssistantMessage)
            and _joinable(turn, message)
        ):
            out[-1] = LLMAssistantMessage(
                turn.content or message.content,
                turn.reasoning_content or message.reasoning_content,
                turn.tool_calls + message.tool_calls,
            )
        else:
            out.append(message)
    return tuple(out)


def traced_call(
    source: SourceRef,
    key: Any,
    sent: tuple[LLMMessage, ...] | None,
    answered: tuple[LLMMessage, ...] | None,
    *,
    request: StoredRequest | None,
    times: tuple[datetime | None, datetime | None],
    extra: dict[str, Any],
    unplaced: list[Any],
) -> ModelCall:
    """A traced model call (``times``: its start and end); the message parts that had no place are kept in
    ``extra["parts"]``."""
    if unplaced:
        extra["parts"] = unplaced
    started_at, ended_at = times
    return ModelCall(source, key, sent, answered, request, started_at, ended_at, extra=extra)


def answer_of(answered: Sequence[LLMMessage] | None) -> tuple[LLMMessage, ...] | None:
    """The assistant messages of what a traced call answered (None: not captured)."""
    return tuple(m for m in answered if m.role == "assistant") if answered is not None else None


def span_model_call(
    span: Span,
    path: str,
    key: Any,
    sent: tuple[LLMMessage, ...] | None,
    answered: tuple[LLMMessage, ...] | None,
    *,
    request: StoredRequest | None,
    extra: dict[str, Any],
    unplaced: list[Any],
) -> ModelCall:
    """A model span as a model call; the message parts that had no place are kept in ``extra["parts"]``."""
    return traced_call(
        source_of(span, path),
        key,
        one_turn_each(sent),
        one_turn_each(answered),
        request=request,
        times=(span.start, span.end),
        extra=extra,
        unplaced=unplaced,
    )


def tool_execution(
    span: Span, path: str, key: Any, *, name: Any, call_id: Any, arguments: Any, result: Any
) -> ToolExecution:
    """A tool span as a tool run."""
    return ToolExecution(
        source=source_of(span, path),
        key=key,
        name=str(name or span.name),
        call_id=str(call_id) if call_id else None,
        arguments=None if arguments is None else arguments_text(loads(arguments)),
        result=None if result is None else content_text(result),
        is_error=span.is_error,
        started_at=span.start,
        ended_at=span.end,
    )
