"""What the dialects' readers share: a provider body read back into neutral messages (the builders' inverse).

Each dialect's reader (``core/providers/dialects/<x>_read.py``) walks its own shape; these helpers hold what
every shape needs alike: refusing a field that is not what it must be (naming its JSON path), splitting function
tools from a provider's built-in ones, media parts from URLs and inline data, generation parameters, and the
top-level fields the neutral form has no place for (kept, never dropped).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.llm.messages import (
    LLMAudioPart,
    LLMFilePart,
    LLMImagePart,
    LLMMediaPart,
    LLMMessage,
    LLMTextPart,
    LLMUserPart,
    LLMVideoPart,
)
from core.providers.base import JSON, GenerationParams, ReadBody, ToolChoice, ToolSpec
from core.request_context.shapes import RequestFieldError, read_tool_choice, read_tools

_MEDIA: dict[str, type[LLMMediaPart]] = {
    "image": LLMImagePart,
    "audio": LLMAudioPart,
    "video": LLMVideoPart,
    "file": LLMFilePart,
}
# Tool items that are functions: a neutral/Chat/Responses/Anthropic custom tool, or Gemini's declarations.
_FUNCTION_TYPES = (None, "function", "custom")
_GEMINI_DECLARATIONS = ("functionDeclarations", "function_declarations")


def as_object(value: Any, at: str) -> JSON:
    """``value`` when it is a JSON object; RequestFieldError naming ``at`` otherwise."""
    if not isinstance(value, Mapping):
        raise RequestFieldError(at, "expected a JSON object")
    return dict(value)


def as_list(value: Any, at: str) -> list[Any]:
    """``value`` when it is a JSON array; RequestFieldError naming ``at`` otherwise."""
    if not isinstance(value, list):
        raise RequestFieldError(at, "expected a JSON array")
    return value


def as_text(value: Any, at: str) -> str:
    """``value`` when it is a string; RequestFieldError naming ``at`` otherwise."""
    if not isinstance(value, str):
        raise RequestFieldError(at, "expected a string")
    return value


def whole(value: Any, at: str) -> int | None:
    """A whole number, or None when absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestFieldError(at, "expected a whole number")
    return value


def number(value: Any, at: str) -> float | None:
    """A number, or None when absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestFieldError(at, "expected a number")
    return float(value)


def joined_text(value: Any, at: str, text_types: Collection[str]) -> str:
    """A content that must be text: a string, null, or a list of parts of ``text_types`` (joined); a refusal
    part's text is under ``refusal``, every other's under ``text``."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    texts: list[str] = []
    for j, raw in enumerate(as_list(value, at)):
        part = as_object(raw, f"{at}[{j}]")
        kind = part.get("type")
        if kind not in text_types:
            raise RequestFieldError(f"{at}[{j}].type", f"a {kind!r} part where only text is taken")
        key = "refusal" if kind == "refusal" else "text"
        texts.append(as_text(part.get(key), f"{at}[{j}].{key}"))
    return "".join(texts)


def text_then_media(
    value: Any, at: str, user_part: Callable[[JSON, str], LLMUserPart]
) -> tuple[str, list[LLMUserPart]]:
    """A tool result's content (null, a string, or a list of parts each read by ``user_part``): its text (the
    first part, when it is text) and the parts after it, which the readers give as the result's attachments."""
    if value is None:
        return "", []
    if isinstance(value, str):
        return value, []
    parts = [user_part(as_object(p, f"{at}[{j}]"), f"{at}[{j}]") for j, p in enumerate(as_list(value, at))]
    if parts and isinstance(parts[0], LLMTextPart):
        return parts[0].text, parts[1:]
    return "", parts


def stop_of(value: Any, at: str) -> tuple[str, ...]:
    """Stop sequences: one string (OpenAI takes a bare one) or an array of strings."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(as_text(s, f"{at}[{i}]") for i, s in enumerate(as_list(value, at)))


@dataclass(frozen=True, slots=True)
class ParamKeys:
    """Where a provider's body names the generation parameters: the first ``max_tokens`` key present counts, ``stop``
    is None where the body has no stop sequences, and ``at`` prefixes the keys in error paths."""

    max_tokens: tuple[str, ...]
    stop: str | None
    temperature: str = "temperature"
    top_p: str = "top_p"
    at: str = ""


def params_of(body: Mapping[str, Any], keys: ParamKeys, thinking: bool | None) -> GenerationParams:
    """The generation parameters under the keys this provider names them."""
    at = keys.at
    limit = next((whole(body[k], at + k) for k in keys.max_tokens if body.get(k) is not None), None)
    return GenerationParams(
        max_tokens=limit,
        temperature=number(body.get(keys.temperature), at + keys.temperature),
        top_p=number(body.get(keys.top_p), at + keys.top_p),
        stop=stop_of(body.get(keys.stop), at + keys.stop) if keys.stop else (),
        thinking=thinking,
    )


def request_read(
    body: Mapping[str, Any],
    messages: tuple[LLMMessage, ...],
    tools: tuple[ToolSpec, ...],
    extra: JSON,
    keys: ParamKeys,
    thinking: bool | None,
) -> ReadBody:
    """A request read back, where the model, the tool choice and the parameters are top-level keys (every
    dialect's request but Gemini's)."""
    return ReadBody(
        messages=messages,
        model=model_of(body),
        tools=tools,
        tool_choice=choice_of(body.get("tool_choice"), "tool_choice"),
        params=params_of(body, keys, thinking),
        extra=extra,
    )


def split_tools(value: Any, at: str) -> tuple[tuple[ToolSpec, ...], list[Any]]:
    """The function tools of a tool list as neutral tools, and the provider's built-in tools (web search, code
    execution) as recorded: they have no schema to carry to another provider, so they are kept apart."""
    if value is None:
        return (), []
    functions: list[Any] = []
    builtins: list[Any] = []
    for item in [value] if isinstance(value, Mapping) else as_list(value, at):  # one Gemini tool, unlisted
        if isinstance(item, Mapping) and not _is_function(item):
            builtins.append(item)
        else:
            functions.append(item)
    return read_tools(functions, at), builtins


def function_tools(value: Any, extra: JSON, at: str = "tools") -> tuple[ToolSpec, ...]:
    """The function tools of a tool list as neutral tools; the provider's built-in ones, if any, are kept in
    ``extra["tools"]`` as recorded (``split_tools``)."""
    tools, builtins = split_tools(value, at)
    if builtins:
        extra["tools"] = builtins
    return tools


def _is_function(item: Mapping[str, Any]) -> bool:
    if any(k in item for k in _GEMINI_DECLARATIONS) or isinstance(item.get("function"), Mapping):
        return True
    if item.get("type") == "custom":  # Anthropic's custom tool has a schema; OpenAI's (free-form text) has none
        return "input_schema" in item
    if "type" in item:
        return item["type"] in _FUNCTION_TYPES and "name" in item
    return "name" in item  # an Anthropic tool without a type is a custom (function) tool


def model_of(body: Mapping[str, Any]) -> str | None:
    """The model a recorded body names, or None when it names none (or not as text)."""
    model = body.get("model")
    return model if isinstance(model, str) else None


def choice_of(value: Any, at: str) -> ToolChoice | None:
    """A recorded tool choice in any provider's form, or None when absent."""
    return None if value is None else read_tool_choice(value, at)


def media_part(
    kind: str,
    *,
    url: str | None = None,
    data: str | None = None,
    media_type: str | None = None,
    filename: str | None = None,
    detail: str | None = None,
) -> LLMMediaPart:
    """A media part of ``kind`` (image, audio, video, file) where the body had it: a URL (data URLs included) or
    inline base64."""
    return _MEDIA[kind](url=url, data=data, media_type=media_type, filename=filename, detail=detail)


def kind_of(media_type: str | None) -> str:
    """The media kind of a MIME type: image, audio, video, or file for anything else."""
    top = (media_type or "").split("/", 1)[0]
    return top if top in ("image", "audio", "video") else "file"


def unread(body: Mapping[str, Any], known: Iterable[str]) -> JSON:
    """The fields of ``body`` outside ``known``, as recorded (what the neutral form has no place for)."""
    seen = frozenset(known)
    return {k: v for k, v in body.items() if k not in seen}
