"""Gemini ``generateContent`` bodies (REST JSON, camelCase) read back into neutral messages: the inverse of the
``gemini`` builder. The model is in the URL, not the body: the caller supplies it.

Reading what the builder built gives the messages it was given, except for these normalisations:

==============================  ====================================================================
normalisation                   reason
==============================  ====================================================================
one content, several records    adjacent same-role contents merge (roles alternate)
model parts                     a model content reads as one message: text (joined), thoughts, calls
thought text                    ``thought: true`` parts read as reasoning text (never sent back)
functionCall args as JSON text  ``args`` is an object; its text is the object written compactly
call ids made when absent       Gemini before 3 gives calls no id: ``<name>_<n>`` in order, and each
                                functionResponse without id answers the first open call of its name
thought signatures              a call's ``thoughtSignature`` rides in its ``extra`` (the builder
                                returns it); the documented dummy reads as no signature
functionResponse.response       ``{"output": text}`` / ``{"error": text}`` read as the text (an error);
                                any other object as its JSON text
result attachments              media after the responses read as a user message of media
==============================  ====================================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from core.jsonio import dumps
from core.llm import messages as llm
from core.providers import reading
from core.providers.base import EMPTY_TURN_PLACEHOLDER, JSON, Normalisation, ReadBody
from core.request_context.shapes import RequestFieldError

# Documented dummy signature for calls Gemini did not produce (history from another provider) [docs].
DUMMY_THOUGHT_SIGNATURE = "skip_thought_signature_validator"
# What the builder sends for a user content with no text (base.EMPTY_TURN_PLACEHOLDER).
EMPTY_TEXT_SENT = EMPTY_TURN_PLACEHOLDER
# Provider field on a tool call that holds the signature Gemini returned with that call.
THOUGHT_SIGNATURE_KEY = "thought_signature"
# functionResponse.response keys: "output" for a result, "error" for a failure [SDK docstring].
OUTPUT_KEY, ERROR_KEY = "output", "error"
REQUEST_KEYS = ("contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "model")
CONFIG_KEYS = ("maxOutputTokens", "temperature", "topP", "stopSequences", "thinkingConfig")
PARAM_KEYS = reading.ParamKeys(
    max_tokens=("maxOutputTokens",), stop="stopSequences", top_p="topP", at="generationConfig."
)
# functionCallingConfig modes the neutral tool choice says [SDK: FunctionCallingConfigMode].
CHOICE_MODES = frozenset({"AUTO", "ANY", "NONE"})
RESPONSE_KEYS = ("candidates", "modelVersion")
# The model is part of the URL: ``/v1beta/models/<model>:generateContent`` (or the streaming method).
MODEL_IN_URL = re.compile(r"/models/([^/:]+):(?:generateContent|streamGenerateContent)")


def model_of(url: str) -> str | None:
    """The model a generateContent URL names, or None when the URL is not one."""
    found = MODEL_IN_URL.search(url)
    return found.group(1) if found else None


class _Calls:
    """Call ids: the recorded one, or ``<name>_<n>`` made in order; responses without id answer by name."""

    def __init__(self) -> None:
        self.made = 0
        self.open: list[tuple[str, str]] = []  # (name, id) of calls not yet answered

    def call_id(self, call: JSON) -> str:
        given = call.get("id")
        call_id = given if isinstance(given, str) and given else f"{call.get('name')}_{self.made}"
        self.made += not (isinstance(given, str) and given)
        self.open.append((str(call.get("name")), call_id))
        return call_id

    def answer(self, response: JSON) -> str | None:
        given = response.get("id")
        name = response.get("name")
        for i, (open_name, open_id) in enumerate(self.open):
            if (given and open_id == given) or (not given and open_name == name):
                del self.open[i]
                return open_id
        return given if isinstance(given, str) else None


def read_request(body: Mapping[str, Any], model: str | None = None) -> ReadBody:
    """A generateContent request body as neutral messages and request context (``model`` from the URL)."""
    out: list[llm.LLMMessage] = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    if system is not None:
        fragments = (
            [system] if isinstance(system, str) else reading.as_object(system, "systemInstruction").get("parts") or []
        )
        for j, raw in enumerate(reading.as_list(fragments, "systemInstruction.parts")):
            text = raw if isinstance(raw, str) else reading.as_object(raw, f"systemInstruction.parts[{j}]").get("text")
            out.append(llm.LLMSystemMessage(content=reading.as_text(text, f"systemInstruction.parts[{j}].text")))
    calls = _Calls()
    skipped: JSON = {}
    for i, raw in enumerate(reading.as_list(body.get("contents"), "contents")):
        at = f"contents[{i}]"
        content = reading.as_object(raw, at)
        parts = [
            reading.as_object(p, f"{at}.parts[{j}]")
            for j, p in enumerate(reading.as_list(content.get("parts"), f"{at}.parts"))
        ]
        role = content.get("role", "user")
        if role == "model":
            msg, other = model_message(parts, f"{at}.parts", calls)
            skipped.update(other)
            out.append(msg)
        elif role in ("user", "function"):
            out += _user_content(parts, f"{at}.parts", calls)
        else:
            raise RequestFieldError(f"{at}.role", f"unknown role {role!r}")
    config = reading.as_object(body.get("generationConfig") or {}, "generationConfig")
    extra = reading.unread(body, REQUEST_KEYS)
    thinking = _thinking(config.get("thinkingConfig"))
    config_extra = reading.unread(config, CONFIG_KEYS if thinking is not None else CONFIG_KEYS[:-1])
    if config_extra:
        extra["generationConfig"] = config_extra
    tools = reading.function_tools(body.get("tools"), extra)
    if skipped:
        extra["unread_parts"] = skipped
    function_config = reading.as_object(body.get("toolConfig") or {}, "toolConfig").get("functionCallingConfig")
    if isinstance(function_config, Mapping) and str(function_config.get("mode")).upper() not in CHOICE_MODES:
        extra["toolConfig"] = body["toolConfig"]  # VALIDATED and later modes: no neutral tool choice says them
        function_config = None
    return ReadBody(
        messages=tuple(out),
        model=model or reading.model_of(body),
        tools=tools,
        tool_choice=reading.choice_of(function_config, "toolConfig.functionCallingConfig"),
        params=reading.params_of(config, PARAM_KEYS, thinking),
        extra=extra,
    )


def _thinking(value: Any) -> bool | None:
    if not isinstance(value, Mapping):
        return None
    # The SDK's snake case reaches the wire too (proto JSON takes both spellings).
    if value.get("includeThoughts", value.get("include_thoughts")) is True:
        return True
    if value.get("thinkingBudget", value.get("thinking_budget")) == 0:
        return False
    return None


def _user_content(parts: list[JSON], at: str, calls: _Calls) -> list[llm.LLMMessage]:
    """A user content: its function responses (each a tool message), then a user message of the rest."""
    out: list[llm.LLMMessage] = []
    rest: list[llm.LLMUserPart] = []
    for j, part in enumerate(parts):
        where = f"{at}[{j}]"
        response = part.get("functionResponse")
        if isinstance(response, Mapping):
            out.append(_tool_message(dict(response), f"{where}.functionResponse", calls))
            inner = response.get("parts")
            if isinstance(inner, list) and inner:
                media = tuple(
                    _user_part(reading.as_object(p, f"{where}.parts[{k}]"), where) for k, p in enumerate(inner)
                )
                out.append(llm.LLMUserMessage(content=media, attachment_of=out[-1].tool_call_id))  # type: ignore[union-attr]
        else:
            rest.append(_user_part(part, where))
    if rest:
        out.append(llm.LLMUserMessage(content=tuple(rest)))
    return out


def _tool_message(response: JSON, at: str, calls: _Calls) -> llm.LLMToolMessage:
    value = response.get("response")
    is_error = False
    if isinstance(value, Mapping) and len(value) == 1 and isinstance(value.get(OUTPUT_KEY), str):
        text = value[OUTPUT_KEY]
    elif isinstance(value, Mapping) and len(value) == 1 and isinstance(value.get(ERROR_KEY), str):
        text, is_error = value[ERROR_KEY], True
    else:
        text = dumps(value if value is not None else {}).decode()
    name = response.get("name")
    return llm.LLMToolMessage(
        content=text,
        tool_call_id=calls.answer(response),
        name=name if isinstance(name, str) else None,
        is_error=is_error,
    )


def _user_part(part: JSON, at: str) -> llm.LLMUserPart:
    if "text" in part:
        return llm.LLMTextPart(text=reading.as_text(part["text"], f"{at}.text"))
    for key, data_key in (("inlineData", "data"), ("fileData", "fileUri")):
        if key in part:
            blob = reading.as_object(part[key], f"{at}.{key}")
            mime = blob.get("mimeType")
            media_type = mime if isinstance(mime, str) else None
            value = reading.as_text(blob.get(data_key), f"{at}.{key}.{data_key}")
            if key == "inlineData":
                return reading.media_part(reading.kind_of(media_type), data=value, media_type=media_type)
            return reading.media_part(reading.kind_of(media_type), url=value, media_type=media_type)
    raise RequestFieldError(at, f"a part of no neutral kind in a user content ({', '.join(part) or 'empty'})")


def model_message(parts: list[JSON], at: str, calls: _Calls | None = None) -> tuple[llm.LLMAssistantMessage, JSON]:
    """A model content's parts as one assistant message, and the parts of no neutral kind by path (code
    execution, executable code), which the caller keeps."""
    calls = calls or _Calls()
    texts: list[str] = []
    thoughts: list[str] = []
    tool_calls: list[llm.LLMToolCall] = []
    other: JSON = {}
    for j, part in enumerate(parts):
        where = f"{at}[{j}]"
        call = part.get("functionCall")
        if isinstance(call, Mapping):
            call = dict(call)
            signature = part.get("thoughtSignature")
            extra: dict[str, Any] | None = (
                {THOUGHT_SIGNATURE_KEY: signature}
                if isinstance(signature, str) and signature and signature != DUMMY_THOUGHT_SIGNATURE
                else None
            )
            if not call.get("id"):
                extra = {**(extra or {}), llm.MADE_CALL_ID: True}
            tool_calls.append(
                llm.LLMToolCall(
                    id=calls.call_id(call),
                    name=reading.as_text(call.get("name"), f"{where}.functionCall.name"),
                    arguments=dumps(call.get("args") or {}).decode(),
                    extra=extra,
                )
            )
        elif "text" in part and part.get("thought") is True:
            thoughts.append(reading.as_text(part["text"], f"{where}.text"))
        elif "text" in part:
            texts.append(reading.as_text(part["text"], f"{where}.text"))
        else:
            other[where] = part
    msg = llm.LLMAssistantMessage(
        content="".join(texts), reasoning_content="\n".join(thoughts) or None, tool_calls=tuple(tool_calls)
    )
    return msg, other


def read_response(body: Mapping[str, Any]) -> ReadBody:
    """A generateContent answer: the first candidate's content as one assistant message; usage, finish reason
    and the parts of no neutral kind in ``extra``."""
    candidates = reading.as_list(body.get("candidates") or [], "candidates")
    extra = reading.unread(body, RESPONSE_KEYS)
    messages: tuple[llm.LLMMessage, ...] = ()
    if candidates:
        candidate = reading.as_object(candidates[0], "candidates[0]")
        content = reading.as_object(candidate.get("content") or {}, "candidates[0].content")
        parts = [
            reading.as_object(p, f"candidates[0].content.parts[{j}]") for j, p in enumerate(content.get("parts") or [])
        ]
        msg, other = model_message(parts, "candidates[0].content.parts")
        messages = (msg,)
        if other:
            extra["unread_parts"] = other
        extra.update(reading.unread(candidate, ("content", "index")))
    version = body.get("modelVersion")
    return ReadBody(messages=messages, model=version if isinstance(version, str) else None, extra=extra)


NORMALISATIONS: tuple[Normalisation, ...] = (
    Normalisation(
        "schema as parametersJsonSchema",
        "a declaration's schema is sent as JSON Schema under parametersJsonSchema, whatever key (parameters, "
        "the SDK's snake case) recorded it",
        re.compile(r"/tools/\d+/functionDeclarations/\d+/(parameters|parameters_json_schema|parametersJsonSchema)"),
        frozenset({"added", "removed"}),
    ),
    Normalisation(
        "one tool object as a list",
        "a tools value of one tool object (which an early v1beta took) is sent as the list the API documents",
        re.compile(r"/tools"),
        frozenset({"changed"}),
        lambda recorded, built, body: isinstance(recorded, Mapping) and isinstance(built, list),
    ),
    Normalisation(
        "systemInstruction role",
        "Gemini ignores the role of systemInstruction; the builder sends parts only",
        re.compile(r"/systemInstruction/role"),
        frozenset({"removed"}),
    ),
    Normalisation(
        "functionResponse.response as text",
        "the neutral tool result is text: a response object other than {output} or {error} travels as its JSON "
        "text under output",
        re.compile(r"/contents/\d+/parts/\d+/functionResponse/response/.*"),
    ),
    Normalisation(
        "allowed function names",
        "the neutral tool choice forces one tool or any: a list of several allowed names is sent as mode ANY",
        re.compile(r"/toolConfig/functionCallingConfig/allowedFunctionNames"),
        frozenset({"removed"}),
        lambda recorded, built, body: isinstance(recorded, list) and len(recorded) != 1,
    ),
    Normalisation(
        "empty generationConfig",
        "an empty generationConfig says nothing; the builder leaves it out",
        re.compile(r"/generationConfig"),
        frozenset({"removed"}),
        lambda recorded, built, body: recorded == {},
    ),
    Normalisation(
        "dummy thought signature",
        "a call Gemini did not sign (another provider's history, or a model before Gemini 3) gets the documented "
        "dummy signature on the first call of its step",
        re.compile(r"/contents/\d+/parts/\d+/thoughtSignature"),
        frozenset({"added"}),
        lambda recorded, built, body: built == DUMMY_THOUGHT_SIGNATURE,
    ),
    Normalisation(
        "call ids made",
        "calls recorded without an id get one made in order (<name>_<n>); the builder sends it with the call "
        "and its response",
        re.compile(r"/contents/\d+/parts/\d+/(functionCall|functionResponse)/id"),
        frozenset({"added"}),
    ),
    Normalisation(
        "thinkingConfig spelling",
        "the SDK's snake case (include_thoughts) is sent in the REST spelling (includeThoughts)",
        re.compile(
            r"/generationConfig/thinkingConfig/(include_thoughts|includeThoughts|thinking_budget|thinkingBudget)"
        ),
        frozenset({"added", "removed"}),
    ),
    Normalisation(
        "empty user text",
        "a user content whose only text is empty is sent as placeholder text (the builder drops empty text and "
        "fills an empty turn); Gemini accepted the empty text in a recording, so the rule is cautious, not required",
        re.compile(r"/contents/\d+/parts/\d+/text"),
        frozenset({"changed"}),
        lambda recorded, built, body: recorded == "" and built == EMPTY_TEXT_SENT,
    ),
    Normalisation(
        "signature of a text part",
        "the neutral message keeps signatures of calls only; Gemini requires them on function calls, not text",
        re.compile(r"/contents/\d+/parts/\d+/thoughtSignature"),
        frozenset({"removed"}),
    ),
    Normalisation(
        "thoughts not sent back",
        "thought parts read as reasoning text, which Gemini does not take back (the builder drops it)",
        re.compile(r"/contents/\d+/parts/\d+"),
        frozenset({"removed"}),
        drop=lambda item: isinstance(item, Mapping) and item.get("thought") is True,
    ),
)
