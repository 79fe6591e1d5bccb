"""Anthropic Messages bodies read back into neutral messages: the inverse of the ``anthropic`` builder.

Reading what the builder built gives the messages it was given, except for these normalisations:

===============================  ===================================================================
normalisation                    reason
===============================  ===================================================================
one turn, several records        adjacent same-role turns are merged (roles alternate): a user turn
                                 holding tool_result blocks and text reads as tool results, then a user
                                 message of the rest
assistant block order            a turn reads as one message: thinking blocks, text (joined), tool_use
tool_use input as JSON text      ``input`` is an object; its text is the object written compactly
result attachments               images inside a tool_result read as a user message ``attachment_of``
                                 that call (the builder puts them back inside)
system blocks                    each system text block reads as one system message
===============================  ===================================================================
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

from core.jsonio import dumps
from core.llm import messages as llm
from core.providers import reading
from core.providers.base import JSON, Normalisation, ReadBody
from core.request_context.shapes import RequestFieldError

THINKING_ON = frozenset({"enabled", "adaptive"})
REQUEST_KEYS = (
    "model", "messages", "system", "tools", "tool_choice", "max_tokens", "temperature", "top_p", "stop_sequences",
    "thinking",
)  # fmt: skip
RESPONSE_KEYS = ("content", "model", "role")
PARAM_KEYS = reading.ParamKeys(max_tokens=("max_tokens",), stop="stop_sequences")
# Where a request's blocks of no neutral kind (server tool use and results) are kept, by JSON path.
UNREAD_BLOCKS = "unread_blocks"


def read_request(body: Mapping[str, Any]) -> ReadBody:
    """A Messages request body as neutral messages and request context."""
    out: list[llm.LLMMessage] = [llm.LLMSystemMessage(content=text) for text in _system(body.get("system"))]
    names: dict[str, str] = {}
    skipped: JSON = {}
    for i, raw in enumerate(reading.as_list(body.get("messages"), "messages")):
        at = f"messages[{i}]"
        turn = reading.as_object(raw, at)
        role = turn.get("role")
        blocks = _blocks(turn.get("content"), f"{at}.content")
        if role == "user":
            out += _user_turn(blocks, at, names)
        elif role == "assistant":
            msg, other = assistant_message(blocks, f"{at}.content")
            skipped.update(other)
            names.update((call.id, call.name) for call in msg.tool_calls)
            out.append(msg)
        else:
            raise RequestFieldError(f"{at}.role", f"unknown role {role!r}")
    extra = reading.unread(body, REQUEST_KEYS)
    tools = reading.function_tools(body.get("tools"), extra)
    if skipped:
        extra[UNREAD_BLOCKS] = skipped
    return reading.request_read(body, tuple(out), tools, extra, PARAM_KEYS, _thinking(body.get("thinking")))


def _thinking(value: Any) -> bool | None:
    if isinstance(value, Mapping) and isinstance(value.get("type"), str):
        return value["type"] in THINKING_ON
    return None


def _system(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    return [
        reading.as_text(reading.as_object(b, f"system[{j}]").get("text"), f"system[{j}].text")
        for j, b in enumerate(value)
    ]


def _blocks(value: Any, at: str) -> list[JSON]:
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    return [reading.as_object(b, f"{at}[{j}]") for j, b in enumerate(reading.as_list(value, at))]


def _user_turn(blocks: list[JSON], at: str, names: dict[str, str]) -> list[llm.LLMMessage]:
    """A user turn: its tool results first (each with its attachments), then a user message of the rest."""
    out: list[llm.LLMMessage] = []
    parts: list[llm.LLMUserPart] = []
    for j, block in enumerate(blocks):
        where = f"{at}.content[{j}]"
        if block.get("type") == "tool_result":
            call_id = reading.as_text(block.get("tool_use_id"), f"{where}.tool_use_id")
            text, media = reading.text_then_media(block.get("content"), f"{where}.content", _user_part)
            out.append(
                llm.LLMToolMessage(
                    content=text, tool_call_id=call_id, name=names.get(call_id), is_error=block.get("is_error") is True
                )
            )
            if media:
                out.append(llm.LLMUserMessage(content=tuple(media), attachment_of=call_id))
        else:
            parts.append(_user_part(block, where))
    if parts:
        out.append(llm.LLMUserMessage(content=tuple(parts)))
    return out


def _user_part(block: JSON, at: str) -> llm.LLMUserPart:
    kind = block.get("type")
    if kind == "text":
        return llm.LLMTextPart(text=reading.as_text(block.get("text"), f"{at}.text"))
    if kind in ("image", "document"):
        source = reading.as_object(block.get("source"), f"{at}.source")
        title = block.get("title")
        filename = title if isinstance(title, str) else None
        source_type = source.get("type")
        media_type = source.get("media_type") if isinstance(source.get("media_type"), str) else None
        neutral = "image" if kind == "image" else "file"
        if source_type == "url":
            return reading.media_part(
                neutral, url=reading.as_text(source.get("url"), f"{at}.source.url"), filename=filename
            )
        if source_type == "base64":
            data = reading.as_text(source.get("data"), f"{at}.source.data")
            medium = reading.kind_of(media_type) if kind == "image" else "file"
            return reading.media_part(medium, data=data, media_type=media_type, filename=filename)
        if source_type == "text":
            text = reading.as_text(source.get("data"), f"{at}.source.data")
            data = base64.b64encode(text.encode("utf-8")).decode("ascii")
            return reading.media_part("file", data=data, media_type="text/plain", filename=filename)
        raise RequestFieldError(f"{at}.source.type", f"unknown source {source_type!r}")
    raise RequestFieldError(f"{at}.type", f"a {kind!r} block has no neutral form in a user turn")


def assistant_message(blocks: list[JSON], at: str) -> tuple[llm.LLMAssistantMessage, JSON]:
    """An assistant turn's blocks as one message, and the blocks of no neutral kind by path (server tools and
    their results, which the caller keeps)."""
    texts: list[str] = []
    reasoning: list[llm.LLMReasoningBlock] = []
    calls: list[llm.LLMToolCall] = []
    other: JSON = {}
    for j, block in enumerate(blocks):
        where = f"{at}[{j}]"
        kind = block.get("type")
        if kind == "text":
            texts.append(reading.as_text(block.get("text"), f"{where}.text"))
        elif kind == "thinking":
            signature = block.get("signature")
            reasoning.append(
                llm.LLMThinking(
                    thinking=reading.as_text(block.get("thinking", ""), f"{where}.thinking"),
                    signature=signature if isinstance(signature, str) else "",
                )
            )
        elif kind == "redacted_thinking":
            reasoning.append(llm.LLMRedactedThinking(data=reading.as_text(block.get("data"), f"{where}.data")))
        elif kind == "tool_use":
            calls.append(
                llm.LLMToolCall(
                    id=reading.as_text(block.get("id"), f"{where}.id"),
                    name=reading.as_text(block.get("name"), f"{where}.name"),
                    arguments=dumps(block.get("input") or {}).decode(),
                )
            )
        else:
            other[where] = block
    msg = llm.LLMAssistantMessage(
        content="".join(texts), reasoning_content=tuple(reasoning) or None, tool_calls=tuple(calls)
    )
    return msg, other


def read_response(body: Mapping[str, Any]) -> ReadBody:
    """A Messages answer: its content as one assistant message; usage, stop reason, id and the blocks of no
    neutral kind (server tool use and results) in ``extra``."""
    msg, other = assistant_message(_blocks(body.get("content"), "content"), "content")
    extra = reading.unread(body, RESPONSE_KEYS)
    if other:
        extra["content"] = other
    model = body.get("model")
    return ReadBody(messages=(msg,), model=model if isinstance(model, str) else None, extra=extra)


def _text_blocks(recorded: Any, built: Any, body: JSON) -> bool:
    return isinstance(recorded, str) and built == [{"type": "text", "text": recorded}]


def _one_text_block(recorded: Any, built: Any, body: JSON) -> bool:
    return isinstance(built, str) and recorded == [{"type": "text", "text": built}]


NORMALISATIONS: tuple[Normalisation, ...] = (
    Normalisation(
        "a string as one text block",
        "a string content or system prompt says the same as one text block, which the builder sends",
        re.compile(r"/system|/messages/\d+/content"),
        frozenset({"changed"}),
        _text_blocks,
    ),
    Normalisation(
        "a tool result's one text block as a string",
        "a tool_result content of one text block reads as its text, which the builder sends as a string",
        re.compile(r"/messages/\d+/content/\d+/content"),
        frozenset({"changed"}),
        _one_text_block,
    ),
    Normalisation(
        "is_error false omitted",
        "false is the default of tool_result.is_error; the builder sends the key only for an error",
        re.compile(r"/messages/\d+/content/\d+/is_error"),
        frozenset({"removed"}),
        lambda recorded, built, body: recorded is False,
    ),
    Normalisation(
        "thinking form and budget",
        "the neutral request keeps thinking on or off: the builder sends the form the model's profile takes "
        "(adaptive, or a budget of its own below max_tokens), not the recorded budget",
        re.compile(r"/thinking/(type|budget_tokens)"),
    ),
    Normalisation(
        "text blocks of a turn joined",
        "an assistant turn reads as one message with one text; its text blocks (split by blocks of no neutral "
        "kind, such as server tool use) are sent as one",
        re.compile(r"/messages/\d+/content/\d+(/text)?"),
        frozenset({"changed", "removed"}),
        lambda recorded, built, body: (
            (isinstance(built, str) and isinstance(recorded, str) and built.startswith(recorded))
            or (isinstance(recorded, Mapping) and recorded.get("type") == "text" and built is None)
        ),
    ),
)
