"""OpenAI Responses bodies read back into neutral messages: the inverse of the ``openai_responses`` builder.

Reading what the builder built gives the messages it was given, except for these normalisations:

===============================  ==================================================================
normalisation                    reason
===============================  ==================================================================
tool error said in the text      ``function_call_output`` has no ``is_error``: ``Error: `` reads as text
result names its call            an output names no tool: the reader gives it its call's name
calls join their message         ``function_call`` items after an assistant message (or each other)
                                 read as that message's calls
``instructions``                 reads as a system message before the input
a string ``input``               reads as one user message
reasoning items                  their raw ``reasoning_text`` (else their summary text) reads as the next
                                 assistant message's reasoning;
                                 ``encrypted_content`` is kept in ``extra`` (bound to the model that
                                 made it, never replayed)
output parts of a result         media inside an output read as a user message ``attachment_of`` it
===============================  ==================================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from msgspec.structs import replace

from core.llm import messages as llm
from core.providers import reading
from core.providers.base import JSON, Normalisation, ReadBody
from core.request_context.shapes import RequestFieldError

SYSTEM_ROLES = frozenset({"system", "developer"})
TEXT_PARTS = frozenset({"input_text", "output_text", "text", "refusal"})
LOW_EFFORTS = frozenset({"none", "minimal", "low"})
REQUEST_KEYS = (
    "model", "input", "instructions", "tools", "tool_choice", "max_output_tokens", "temperature", "top_p", "reasoning",
)  # fmt: skip
RESPONSE_KEYS = ("output", "model")
PARAM_KEYS = reading.ParamKeys(max_tokens=("max_output_tokens",), stop=None)  # the Responses API takes no stop
# Where the items of no neutral kind (built-in tool calls, encrypted reasoning) are kept, by JSON path.
UNREAD_ITEMS = "unread_items"


class _Reader:
    """The items read so far, and the calls each output answers."""

    def __init__(self) -> None:
        self.out: list[llm.LLMMessage] = []
        self.names: dict[str, str] = {}
        self.reasoning: list[str] = []
        self.skipped: JSON = {}
        self.open = False  # the last message is an assistant message later calls join

    def assistant(self, msg: llm.LLMAssistantMessage) -> None:
        if self.reasoning:
            msg = replace(msg, reasoning_content="\n".join(self.reasoning))
            self.reasoning = []
        self.out.append(msg)
        self.open = True

    def call(self, call: llm.LLMToolCall) -> None:
        self.names[call.id] = call.name
        last = self.out[-1] if self.out else None
        if self.open and isinstance(last, llm.LLMAssistantMessage):
            self.out[-1] = replace(last, tool_calls=(*last.tool_calls, call))
        else:
            self.assistant(llm.LLMAssistantMessage(tool_calls=(call,)))

    def add(self, msg: llm.LLMMessage) -> None:
        self.out.append(msg)
        self.open = False

    def item(self, item: JSON, at: str) -> None:
        kind = item.get("type", "message")
        if kind == "message":
            self.message(item, at)
        elif kind == "function_call":
            self.call(function_call(item, at))
        elif kind == "function_call_output":
            call_id = reading.as_text(item.get("call_id"), f"{at}.call_id")
            text, media = reading.text_then_media(item.get("output"), f"{at}.output", _user_part)
            self.add(llm.LLMToolMessage(content=text, tool_call_id=call_id, name=self.names.get(call_id)))
            if media:
                self.add(llm.LLMUserMessage(content=tuple(media), attachment_of=call_id))
        elif kind == "reasoning":
            self.reasoning += _summary(item)
            self.skipped[at] = item
        else:
            self.skipped[at] = item

    def message(self, item: JSON, at: str) -> None:
        role = item.get("role")
        content = item.get("content")
        if role in SYSTEM_ROLES:
            self.add(llm.LLMSystemMessage(content=_text(content, f"{at}.content")))
        elif role == "user":
            self.add(llm.LLMUserMessage(content=_user_parts(content, f"{at}.content")))
        elif role == "assistant":
            self.assistant(llm.LLMAssistantMessage(content=_text(content, f"{at}.content")))
        else:
            raise RequestFieldError(f"{at}.role", f"unknown role {role!r}")


def function_call(item: JSON, at: str) -> llm.LLMToolCall:
    """A ``function_call`` item as a tool call (its ``call_id``, not its item ``id``)."""
    arguments = item.get("arguments")
    return llm.LLMToolCall(
        id=reading.as_text(item.get("call_id"), f"{at}.call_id"),
        name=reading.as_text(item.get("name"), f"{at}.name"),
        arguments=arguments if isinstance(arguments, str) else "",
    )


def _summary(item: JSON) -> list[str]:
    """A reasoning item's text: its raw ``reasoning_text`` content when it has one (open-weight models, OpenRouter),
    else its ``summary_text`` (OpenAI's models keep the raw reasoning to themselves)."""
    raw = [
        part["text"]
        for part in item.get("content") or []
        if isinstance(part, Mapping) and part.get("type") == "reasoning_text" and isinstance(part.get("text"), str)
    ]
    if raw:
        return raw
    return [s["text"] for s in item.get("summary") or [] if isinstance(s, Mapping) and isinstance(s.get("text"), str)]


def read_request(body: Mapping[str, Any]) -> ReadBody:
    """A Responses request body as neutral messages and request context."""
    reader = _Reader()
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        reader.add(llm.LLMSystemMessage(content=instructions))
    value = body.get("input")
    if isinstance(value, str):
        reader.add(llm.LLMUserMessage(content=(llm.LLMTextPart(text=value),)))
    elif value is not None:  # none: a stored prompt (``prompt``) or a server-side history says it all
        for i, raw in enumerate(reading.as_list(value, "input")):
            reader.item(reading.as_object(raw, f"input[{i}]"), f"input[{i}]")
    extra = reading.unread(body, REQUEST_KEYS)
    tools = reading.function_tools(body.get("tools"), extra)
    if reader.skipped:
        extra[UNREAD_ITEMS] = reader.skipped
    reasoning = body.get("reasoning")
    if isinstance(reasoning, Mapping) and set(reasoning) - {"effort"}:
        extra["reasoning"] = {k: v for k, v in reasoning.items() if k != "effort"}
    effort = reasoning.get("effort") if isinstance(reasoning, Mapping) else None
    thinking = effort not in LOW_EFFORTS if isinstance(effort, str) else None
    return reading.request_read(body, tuple(reader.out), tools, extra, PARAM_KEYS, thinking)


def _text(value: Any, at: str) -> str:
    return reading.joined_text(value, at, TEXT_PARTS)


def _user_parts(value: Any, at: str) -> tuple[llm.LLMUserPart, ...]:
    if isinstance(value, str):
        return (llm.LLMTextPart(text=value),)
    return tuple(
        _user_part(reading.as_object(p, f"{at}[{j}]"), f"{at}[{j}]") for j, p in enumerate(reading.as_list(value, at))
    )


def _user_part(part: JSON, at: str) -> llm.LLMUserPart:
    kind = part.get("type")
    if kind in TEXT_PARTS:
        return llm.LLMTextPart(text=reading.as_text(part.get("text"), f"{at}.text"))
    if kind == "input_image":
        url = part.get("image_url")
        if not isinstance(url, str):
            raise RequestFieldError(f"{at}.image_url", "an image by file id has no neutral form")
        return reading.media_part("image", url=url)  # its detail level has no neutral place (NORMALISATIONS)
    if kind == "input_file":
        filename = part.get("filename")
        url = part.get("file_url") or part.get("file_data")
        if not isinstance(url, str):
            raise RequestFieldError(f"{at}.file_data", "a file by file id has no neutral form")
        return reading.media_part("file", url=url, filename=filename if isinstance(filename, str) else None)
    raise RequestFieldError(f"{at}.type", f"unknown content part {kind!r}")


def read_response(body: Mapping[str, Any]) -> ReadBody:
    """A Responses answer: its output items as one assistant message (text, reasoning summary, calls); usage,
    status, ids and the items of no neutral kind in ``extra``."""
    reader = _Reader()
    for i, raw in enumerate(reading.as_list(body.get("output") or [], "output")):
        reader.item(reading.as_object(raw, f"output[{i}]"), f"output[{i}]")
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[llm.LLMToolCall] = []
    for msg in reader.out:
        if isinstance(msg, llm.LLMAssistantMessage):
            texts.append(msg.content)
            thoughts += [msg.reasoning_content] if isinstance(msg.reasoning_content, str) else []
            calls += msg.tool_calls
    reasoning = "\n".join(thoughts + reader.reasoning) or None
    extra = reading.unread(body, RESPONSE_KEYS)
    if reader.skipped:
        extra[UNREAD_ITEMS] = reader.skipped
    model = body.get("model")
    answer = llm.LLMAssistantMessage(content="".join(texts), reasoning_content=reasoning, tool_calls=tuple(calls))
    return ReadBody(messages=(answer,), model=model if isinstance(model, str) else None, extra=extra)


def _string_input(recorded: Any, built: Any, body: JSON) -> bool:
    """The builder's input for a string input: the system items (instructions), then the string as a user item."""
    return (
        isinstance(recorded, str)
        and isinstance(built, list)
        and built[-1:] == [{"role": "user", "content": recorded}]
        and all(isinstance(item, Mapping) and item.get("role") == "system" for item in built[:-1])
    )


NORMALISATIONS: tuple[Normalisation, ...] = (
    Normalisation(
        "instructions as a system item",
        "instructions read as a system message, which the builder sends as the first input item",
        re.compile(r"/instructions|/input/0"),
        frozenset({"added", "removed"}),
        lambda recorded, built, body: (
            (recorded is not None and not isinstance(recorded, Mapping))
            or (isinstance(built, Mapping) and built.get("role") == "system")
        ),
    ),
    Normalisation(
        "a string input as one user item",
        "a string input is one user message, which the builder sends as an input item",
        re.compile(r"/input"),
        frozenset({"changed"}),
        _string_input,
    ),
    Normalisation(
        "a stored prompt",
        "a request naming a stored prompt (prompt) may carry neither model nor input: the prompt holds them; "
        "the builder sends the default model and an empty input",
        re.compile(r"/model|/input"),
        frozenset({"added"}),
        lambda recorded, built, body: "prompt" in body,
    ),
    Normalisation(
        "image detail level",
        "the neutral image part has no detail level (its detail is a description): the builder sends 'auto', "
        "which the SDK's type requires",
        re.compile(r"/input/\d+/(content|output)/\d+/detail"),
        frozenset({"changed", "added"}),
    ),
    Normalisation(
        "item ids and status",
        "the builder sends no item id (an fc_ id demands its reasoning item) nor status: neither is neutral",
        re.compile(r"/input/\d+/(id|status)"),
        frozenset({"removed"}),
    ),
    Normalisation(
        "message type",
        "type 'message' is the default of an input item with a role",
        re.compile(r"/input/\d+/type"),
        frozenset({"removed"}),
        lambda recorded, built, body: recorded == "message",
    ),
    Normalisation(
        "empty assistant text beside calls",
        "an assistant message with no text before function calls says nothing; the builder sends the calls only",
        re.compile(r"/input/\d+"),
        frozenset({"removed"}),
        lambda recorded, built, body: (
            isinstance(recorded, Mapping)
            and recorded.get("role") == "assistant"
            and recorded.get("content") in ("", [])
        ),
    ),
    Normalisation(
        "results of a server-side history",
        "with previous_response_id or conversation the calls live on the server: their outputs have no call in "
        "the body, and the builder drops a result without its call",
        re.compile(r"/input/\d+"),
        frozenset({"removed"}),
        lambda recorded, built, body: (
            isinstance(recorded, Mapping)
            and recorded.get("type") == "function_call_output"
            and bool(body.get("previous_response_id") or body.get("conversation"))
        ),
    ),
    Normalisation(
        "one text part as a string",
        "a content of one input_text part says the same as its text, which the builder sends",
        re.compile(r"/input/\d+/content"),
        frozenset({"changed"}),
        lambda recorded, built, body: (
            isinstance(recorded, list)
            and len(recorded) == 1
            and isinstance(recorded[0], Mapping)
            and recorded[0].get("text") == built
        ),
    ),
    Normalisation(
        "allowed tools",
        "the neutral tool choice forces one tool or any: allowed_tools naming several is sent as its mode",
        re.compile(r"/tool_choice"),
        frozenset({"changed"}),
        lambda recorded, built, body: (
            isinstance(recorded, Mapping)
            and recorded.get("mode") == built
            and isinstance(recorded.get("tools"), list)
            and len(recorded["tools"]) != 1
        ),
    ),
    Normalisation(
        "reasoning effort as a switch",
        "the neutral request keeps reasoning on or off; on is sent as the default effort (medium)",
        re.compile(r"/reasoning/effort"),
        frozenset({"changed"}),
    ),
)
