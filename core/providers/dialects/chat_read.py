"""Chat Completions bodies read back into neutral messages: the inverse of ``chat_completions``' builder.

Serves OpenAI and the OpenAI-compatible Zhipu and Doubao (their quirks: ``reasoning_content`` on assistant
messages, a ``thinking`` switch object, ``video_url``/``file_url`` parts). Reading what the builder built gives
the messages it was given, except for these normalisations (each a fact of the shape, not a choice here):

============================  =======================================================================
normalisation                 reason
============================  =======================================================================
tool error said in the text   a tool message has no ``is_error``: the builder writes ``Error: `` first,
                              which reads back as text (a result may start so legitimately)
result names its call         a tool message carries no tool name: the reader gives it its call's name
consecutive calls merged      one assistant message carries all calls of a step (OpenAI requires it)
system roles                  ``developer`` (the o-series' system role) reads as a system message
assistant content parts       a list of text parts reads as their text, joined
media by URL                  an ``image_url``/``file`` data URL stays a URL; the builder resolves it
image detail level            kept by path in ``extra`` (the neutral part's ``detail`` is a description)
reasoning                     OpenRouter's ``reasoning`` text reads as ``reasoning_content``
custom tool calls             a ``custom`` call's free-form ``input`` is its arguments, ``type`` in its extra
============================  =======================================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from core.llm import messages as llm
from core.providers import reading
from core.providers.base import JSON, Normalisation, ReadBody
from core.request_context.shapes import RequestFieldError

SYSTEM_ROLES = frozenset({"system", "developer"})
TEXT_PARTS = ("text", "refusal")
# Audio formats of input_audio and the media type each is [SDK: InputAudio.format].
AUDIO_MEDIA_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg"}
# Parts whose value is {"url": ...}: the key is the part type, the kind the neutral part.
URL_PARTS = {"image_url": "image", "video_url": "video", "file_url": "file"}
# reasoning_effort values that ask for the least reasoning: read as thinking switched off.
LOW_EFFORTS = frozenset({"none", "minimal", "low"})
REQUEST_KEYS = (
    "model", "messages", "tools", "tool_choice", "max_tokens", "max_completion_tokens", "temperature", "top_p",
    "stop", "reasoning_effort", "thinking",
)  # fmt: skip
RESPONSE_KEYS = ("choices", "model")
# OpenAI's max_completion_tokens first, then the older max_tokens.
PARAM_KEYS = reading.ParamKeys(max_tokens=("max_completion_tokens", "max_tokens"), stop="stop")
# OpenRouter's name for an assistant message's reasoning text (DeepSeek's is reasoning_content)
# [https://openrouter.ai/docs/use-cases/reasoning-tokens]; both read as the neutral reasoning_content.
OPENROUTER_REASONING = "reasoning"
# Where a request's message fields of no neutral place (a participant name) are kept, by path.
UNREAD_FIELDS = "unread_fields"


def read_request(body: Mapping[str, Any], *, effort_sent: bool = True, switch_sent: bool = False) -> ReadBody:
    """A Chat Completions request body as neutral messages and request context.

    ``effort_sent``: the dialect sends ``reasoning_effort`` (OpenAI); ``switch_sent``: it sends a ``thinking``
    object (the vendors). What the dialect does not send is kept in ``extra``, as is a ``thinking`` object that
    switches nothing."""
    fields: JSON = {}
    messages = read_messages(reading.as_list(body.get("messages"), "messages"), fields)
    thinking, unread_keys = _thinking(body, effort_sent, switch_sent)
    extra = reading.unread(body, [k for k in REQUEST_KEYS if k not in unread_keys])
    if fields:
        extra[UNREAD_FIELDS] = fields
    tools = reading.function_tools(body.get("tools"), extra)
    return reading.request_read(body, messages, tools, extra, PARAM_KEYS, thinking)


def _thinking(body: Mapping[str, Any], effort_sent: bool, switch_sent: bool) -> tuple[bool | None, tuple[str, ...]]:
    """The reasoning switch (OpenAI's ``reasoning_effort``, or the vendors' ``thinking: {"type": ...}``), and the
    keys it leaves unread (kept in ``extra``)."""
    thinking = body.get("thinking")
    switch = thinking.get("type") if isinstance(thinking, Mapping) and switch_sent else None
    effort = body.get("reasoning_effort")
    unread_keys: list[str] = []
    if "thinking" in body and switch not in ("enabled", "disabled"):
        unread_keys.append("thinking")
    if "reasoning_effort" in body and not effort_sent:
        unread_keys.append("reasoning_effort")
    if switch in ("enabled", "disabled"):
        return switch == "enabled", tuple(unread_keys)
    if isinstance(effort, str) and effort_sent:
        return effort not in LOW_EFFORTS, tuple(unread_keys)
    return None, tuple(unread_keys)


def read_messages(items: list[Any], unread_fields: JSON | None = None) -> tuple[llm.LLMMessage, ...]:
    """The ``messages`` array as neutral messages; tool results take the name of the call they answer.

    A participant ``name`` (no neutral place) goes into ``unread_fields`` by path, so it is kept, not lost."""
    out: list[llm.LLMMessage] = []
    names: dict[str, str] = {}
    for i, raw in enumerate(items):
        at = f"messages[{i}]"
        item = reading.as_object(raw, at)
        role = item.get("role")
        if role not in ("tool", "function") and "name" in item and unread_fields is not None:
            unread_fields[f"{at}.name"] = item["name"]
        if role in SYSTEM_ROLES:
            out.append(llm.LLMSystemMessage(content=_text(item.get("content"), f"{at}.content")))
        elif role == "user":
            out.append(llm.LLMUserMessage(content=_user_parts(item.get("content"), f"{at}.content", unread_fields)))
        elif role == "assistant":
            msg = assistant_message(item, at)
            names.update((call.id, call.name) for call in msg.tool_calls)
            out.append(msg)
        elif role == "tool":
            call_id = item.get("tool_call_id")
            out.append(
                llm.LLMToolMessage(
                    content=_text(item.get("content"), f"{at}.content"),
                    tool_call_id=call_id if isinstance(call_id, str) else None,
                    name=names.get(call_id) if isinstance(call_id, str) else None,
                )
            )
        elif role == "function":
            name = reading.as_text(item.get("name"), f"{at}.name")
            out.append(llm.LLMFunctionMessage(name=name, content=_text(item.get("content"), f"{at}.content")))
        else:
            raise RequestFieldError(f"{at}.role", f"unknown role {role!r}")
    return tuple(out)


def assistant_message(item: Mapping[str, Any], at: str) -> llm.LLMAssistantMessage:
    """An assistant message (of a request's history or of an answer's choice)."""
    calls: list[llm.LLMToolCall] = []
    for j, raw in enumerate(reading.as_list(item.get("tool_calls") or [], f"{at}.tool_calls")):
        call = reading.as_object(raw, f"{at}.tool_calls[{j}]")
        if call.get("type") == "custom":
            calls.append(_custom_call(call, f"{at}.tool_calls[{j}]"))
            continue
        function = reading.as_object(call.get("function"), f"{at}.tool_calls[{j}].function")
        arguments = function.get("arguments")
        calls.append(
            llm.LLMToolCall(
                id=reading.as_text(call.get("id"), f"{at}.tool_calls[{j}].id"),
                name=reading.as_text(function.get("name"), f"{at}.tool_calls[{j}].function.name"),
                arguments=arguments if isinstance(arguments, str) else orjson.dumps(arguments or {}).decode(),
            )
        )
    legacy = item.get("function_call")
    function_call = None
    if isinstance(legacy, Mapping):
        function_call = llm.LLMFunctionCall(
            name=reading.as_text(legacy.get("name"), f"{at}.function_call.name"),
            arguments=str(legacy.get("arguments") or ""),
        )
    reasoning = item.get("reasoning_content")
    if not reasoning:
        reasoning = item.get(OPENROUTER_REASONING)
    return llm.LLMAssistantMessage(
        content=_text(item.get("content"), f"{at}.content"),
        reasoning_content=reasoning if isinstance(reasoning, str) and reasoning else None,
        tool_calls=tuple(calls),
        function_call=function_call,
    )


def _custom_call(call: Mapping[str, Any], at: str) -> llm.LLMToolCall:
    """A call of a custom (free-form input) tool: its input text is the arguments, ``type`` kept in ``extra``."""
    custom = reading.as_object(call.get("custom"), f"{at}.custom")
    return llm.LLMToolCall(
        id=reading.as_text(call.get("id"), f"{at}.id"),
        name=reading.as_text(custom.get("name"), f"{at}.custom.name"),
        arguments=reading.as_text(custom.get("input"), f"{at}.custom.input"),
        extra={"type": "custom"},
    )


def _text(value: Any, at: str) -> str:
    """A content that must be text: a string, null, or a list of text parts (joined)."""
    return reading.joined_text(value, at, TEXT_PARTS)


def _user_parts(value: Any, at: str, unread_fields: JSON | None) -> tuple[llm.LLMUserPart, ...]:
    """A user content's parts; an image's ``detail`` level (no neutral place: the neutral part's ``detail`` is
    its description) goes into ``unread_fields`` by path."""
    if isinstance(value, str):
        return (llm.LLMTextPart(text=value),)
    parts: list[llm.LLMUserPart] = []
    for j, raw in enumerate(reading.as_list(value, at)):
        where = f"{at}[{j}]"
        part = reading.as_object(raw, where)
        kind = part.get("type")
        if kind == "text":
            parts.append(llm.LLMTextPart(text=reading.as_text(part.get("text"), f"{where}.text")))
        elif kind in URL_PARTS:
            value = part.get(kind)
            inner = {"url": value} if isinstance(value, str) else reading.as_object(value, f"{where}.{kind}")
            if "detail" in inner and unread_fields is not None:
                unread_fields[f"{where}.{kind}.detail"] = inner["detail"]
            parts.append(
                reading.media_part(URL_PARTS[kind], url=reading.as_text(inner.get("url"), f"{where}.{kind}.url"))
            )
        elif kind == "input_audio":
            inner = reading.as_object(part.get("input_audio"), f"{where}.input_audio")
            media_type = AUDIO_MEDIA_TYPES.get(str(inner.get("format")))
            url = inner.get("url")
            data = inner.get("data")
            parts.append(
                reading.media_part(
                    "audio",
                    url=url if isinstance(url, str) else None,
                    data=data if isinstance(data, str) else None,
                    media_type=media_type,
                )
            )
        elif kind == "file":
            inner = reading.as_object(part.get("file"), f"{where}.file")
            filename = inner.get("filename")
            parts.append(
                reading.media_part(
                    "file",
                    url=reading.as_text(inner.get("file_data"), f"{where}.file.file_data"),
                    filename=filename if isinstance(filename, str) else None,
                )
            )
        else:
            raise RequestFieldError(f"{where}.type", f"unknown content part {kind!r}")
    return tuple(parts)


def read_response(body: Mapping[str, Any]) -> ReadBody:
    """A Chat Completions answer: the first choice's message; usage, finish reason and ids in ``extra``."""
    choices = reading.as_list(body.get("choices"), "choices")
    messages: tuple[llm.LLMMessage, ...] = ()
    extra: JSON = reading.unread(body, RESPONSE_KEYS)
    if choices:
        choice = reading.as_object(choices[0], "choices[0]")
        messages = (
            assistant_message(reading.as_object(choice.get("message"), "choices[0].message"), "choices[0].message"),
        )
        if choice.get("finish_reason") is not None:
            extra["finish_reason"] = choice["finish_reason"]
        if len(choices) > 1:
            extra["choices"] = choices[1:]
    model = body.get("model")
    return ReadBody(messages=messages, model=model if isinstance(model, str) else None, extra=extra)


def _developer_as_system(recorded: Any, built: Any, body: JSON) -> bool:
    """A developer message removed, or the system message made of a recorded developer message's text."""
    if isinstance(recorded, Mapping):
        return recorded.get("role") == "developer"
    if not (isinstance(built, Mapping) and built.get("role") == "system"):
        return False
    developers = [m for m in body.get("messages") or [] if isinstance(m, Mapping) and m.get("role") == "developer"]
    return any(_text(m.get("content"), "") == built.get("content") for m in developers)


def _one_text_part(recorded: Any, built: Any, body: JSON) -> bool:
    return (
        isinstance(recorded, list)
        and len(recorded) == 1
        and isinstance(recorded[0], Mapping)
        and recorded[0].get("type") == "text"
        and recorded[0].get("text") == built
    )


NORMALISATIONS: tuple[Normalisation, ...] = (
    Normalisation(
        "one text part as a string",
        "a content of one text part says the same as its text, which the builder sends (every Chat endpoint "
        "takes a string)",
        re.compile(r"/messages/\d+/content"),
        frozenset({"changed"}),
        _one_text_part,
    ),
    Normalisation(
        "a URL string as an object",
        "an image_url given as a bare URL string (which OpenAI accepts) is sent in the documented {url} form",
        re.compile(r"/messages/\d+/content/\d+/(image_url|video_url|file_url)"),
        frozenset({"changed"}),
        lambda recorded, built, body: isinstance(recorded, str) and built == {"url": recorded},
    ),
    Normalisation(
        "developer role as system",
        "a developer message (the o-series' name for system) reads as a system message, which the builder "
        "sends with the system role (OpenAI treats system as developer on those models)",
        re.compile(r"/messages/\d+"),
        frozenset({"added", "removed"}),
        _developer_as_system,
    ),
    Normalisation(
        "null content beside tool calls",
        "an assistant turn that only calls tools is sent with content null (OpenAI's own SDK does), where the "
        "recording left the key out",
        re.compile(r"/messages/\d+/content"),
        frozenset({"added"}),
        lambda recorded, built, body: built is None,
    ),
    Normalisation(
        "reasoning effort as a switch",
        "the neutral request keeps reasoning on or off; on is sent as the default effort (medium), off as the "
        "model's lowest",
        re.compile(r"/reasoning_effort"),
        frozenset({"changed"}),
    ),
    Normalisation(
        "max_tokens as max_completion_tokens",
        "the deprecated max_tokens is sent under the name reasoning models take (the same limit)",
        re.compile(r"/max_tokens|/max_completion_tokens"),
        frozenset({"added", "removed"}),
    ),
)
