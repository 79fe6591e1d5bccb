"""Strict validation of request bodies against the official SDKs' own request types (docs/providers.md section 8).

Preflight's first check, and the tests' oracle for every built body.

The OpenAI and Anthropic param types are TypedDicts whose lists are ``Iterable[...]``: pydantic
validates those lazily, so a plain ``TypeAdapter`` accepts nearly anything inside a message. Here each
SDK TypedDict is rebuilt as a *strict mirror*: ``Iterable``/``Sequence`` become ``list``, unions whose
members all carry a Required literal tag get a discriminator, and every TypedDict forbids extra keys.
Required-ness is read from the ``Required[...]`` wrappers (the SDK modules use postponed annotations,
so ``__required_keys__`` is empty). Response models that the SDK unions accept beside the TypedDicts are
left out: a JSON body is the TypedDict form. google-genai's types are pydantic models with ``extra='forbid'``
already and are used as they are.
"""

from __future__ import annotations

import collections.abc
import contextlib
import functools
import types
import typing
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

import typing_extensions
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from core.sdk_imports import SDK_IMPORT_LOCK

if TYPE_CHECKING:
    from core.providers.base import Dialect
    from core.providers.dialects.chat_completions import Extensions

_STRICT = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
_LISTLIKE = {
    collections.abc.Iterable,
    collections.abc.Sequence,
    collections.abc.Collection,
    list,
    typing.List,  # noqa: UP006 - matched as an origin
}
_cache: dict[Any, Any] = {}

Loc = tuple[str | int, ...]


class BodyTypeError(ValueError):
    """A body the SDK types reject: each mistake's location in the body (keys, indexes, union tags) and message."""

    def __init__(self, errors: list[tuple[Loc, str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{'.'.join(map(str, loc)) or 'body'}: {msg}" for loc, msg in errors[:5]))


@contextlib.contextmanager
def _located(*prefix: str | int) -> Iterator[None]:
    """Turn a pydantic error (or a hand check's ValueError) under ``prefix`` into a BodyTypeError."""
    try:
        yield
    except BodyTypeError:
        raise
    except ValidationError as exc:
        raise BodyTypeError([((*prefix, *e["loc"]), e["msg"]) for e in exc.errors()]) from exc
    except ValueError as exc:
        raise BodyTypeError([(prefix, str(exc))]) from exc


def strictify(tp: Any) -> Any:
    """The strict mirror of an SDK type (cached when hashable; these SDKs have no recursive TypedDicts)."""
    with contextlib.suppress(KeyError, TypeError):
        return _cache[tp]
    result = _strictify(tp)
    with contextlib.suppress(TypeError):
        _cache[tp] = result
    return result


def _strictify(tp: Any) -> Any:
    if typing_extensions.is_typeddict(tp):
        return _typeddict(tp)
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is Annotated:
        return Annotated[(strictify(args[0]), *tp.__metadata__)]
    if origin in (typing_extensions.Required, typing_extensions.NotRequired):
        return strictify(args[0])
    if origin in (Union, types.UnionType):
        if any(typing_extensions.is_typeddict(a) for a in args):
            # Response models (pydantic BaseModels with extra allowed) are accepted beside the TypedDicts so
            # SDK users can pass a reply back; a JSON body is the TypedDict form, so only that is kept.
            args = tuple(a for a in args if not _is_model_type(a))
            if len(args) == 1:
                return strictify(args[0])
        members = tuple(strictify(a) for a in args)
        union = Union[members]  # type: ignore[valid-type]  # noqa: UP007
        tag = _common_tag(args)
        return Annotated[union, Field(discriminator=tag)] if tag else union
    if origin in _LISTLIKE:
        return list[strictify(args[0])] if args else list  # type: ignore[misc]
    if origin in (dict, collections.abc.Mapping, typing.Dict):  # noqa: UP006
        return dict[strictify(args[0]), strictify(args[1])] if args else dict  # type: ignore[misc]
    if origin is tuple:
        return tuple[tuple(strictify(a) for a in args)] if args else tuple  # type: ignore[misc]
    return tp


def _is_model_type(tp: Any) -> bool:
    """A pydantic model class, or an (annotated) union made only of them (e.g. anthropic's ContentBlock)."""
    if isinstance(tp, type):
        return issubclass(tp, BaseModel)
    origin = get_origin(tp)
    if origin is Annotated:
        return _is_model_type(get_args(tp)[0])
    if origin in (Union, types.UnionType):
        return all(_is_model_type(a) for a in get_args(tp))
    return False


def _hints(td: Any) -> dict[str, Any]:
    return typing.get_type_hints(td, include_extras=True)


def _typeddict(td: Any) -> Any:
    fields: dict[str, Any] = {}
    total = getattr(td, "__total__", True)
    for name, hint in _hints(td).items():
        origin = get_origin(hint)
        inner = strictify(hint)
        if origin is typing_extensions.Required or (total and origin is not typing_extensions.NotRequired):
            fields[name] = typing_extensions.Required[inner]
        else:
            fields[name] = typing_extensions.NotRequired[inner]
    mirror = typing_extensions.TypedDict(f"Strict{td.__name__}", fields)  # type: ignore[misc]
    mirror.__pydantic_config__ = _STRICT  # type: ignore[attr-defined]
    return mirror


def _literal_values(hint: Any) -> tuple[Any, ...] | None:
    origin = get_origin(hint)
    if origin in (typing_extensions.Required, typing_extensions.NotRequired, Annotated):
        return _literal_values(get_args(hint)[0])
    if origin is Literal:
        return get_args(hint)
    return None


def _common_tag(members: tuple[Any, ...]) -> str | None:
    """``type`` or ``role`` when every member is a TypedDict with that key Required and a distinct literal."""
    if len(members) < 2 or not all(typing_extensions.is_typeddict(m) for m in members):
        return None
    for key in ("type", "role"):
        seen: set[Any] = set()
        for member in members:
            hints = _hints(member)
            hint = hints.get(key)
            required = hint is not None and (
                get_origin(hint) is typing_extensions.Required
                or (getattr(member, "__total__", True) and get_origin(hint) is not typing_extensions.NotRequired)
            )
            values = _literal_values(hint) if required else None
            if not values or seen.intersection(values):
                break
            seen.update(values)
        else:
            return key
    return None


@functools.cache
def adapter(tp: Any) -> TypeAdapter[Any]:
    """A TypeAdapter of the strict mirror of ``tp``."""
    return TypeAdapter(strictify(tp))


@functools.cache
def _list_of(model: type[BaseModel]) -> TypeAdapter[list[Any]]:
    """A TypeAdapter of a list of google-genai models (made once: building one costs more than a small body)."""
    return TypeAdapter(list[model])  # type: ignore[valid-type]


def openai_chat_body(body: dict[str, Any]) -> None:
    """Validate a Chat Completions body (openai, and the OpenAI-shaped part of zhipu/doubao bodies)."""
    with SDK_IMPORT_LOCK:
        from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    adapter(CompletionCreateParamsNonStreaming).validate_python(body)


def openai_responses_body(body: dict[str, Any]) -> None:
    """Validate a Responses body: the whole create params, input items included."""
    with SDK_IMPORT_LOCK:
        from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

    adapter(ResponseCreateParamsNonStreaming).validate_python(body)


# anthropic 1.0 removed temperature and top_p from the request types; the API still takes them (0 to 1) on the
# models before Opus 4.7, sent as extra body fields (simonw/llm-anthropic#82). Checked here by hand.
ANTHROPIC_SAMPLING = ("temperature", "top_p")


def anthropic_body(body: dict[str, Any]) -> None:
    """Validate a Messages body: the whole create params, messages, system and tools included."""
    with SDK_IMPORT_LOCK:
        from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    sampling = {key: body[key] for key in ANTHROPIC_SAMPLING if key in body}
    for key, value in sampling.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise BodyTypeError([((key,), f"{key} must be a number from 0 to 1")])
    rest = {key: value for key, value in body.items() if key not in sampling} if sampling else body
    adapter(MessageCreateParamsNonStreaming).validate_python(rest)


GEMINI_KEYS = {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}


def gemini_body(body: dict[str, Any]) -> None:
    """Validate a generateContent REST body with google-genai's own models (extra keys forbidden)."""
    with SDK_IMPORT_LOCK:
        from google.genai import types as gt

    unknown = set(body) - GEMINI_KEYS
    if unknown:
        raise BodyTypeError([((), f"unknown top-level keys {sorted(unknown)}")])
    with _located("contents"):
        contents = _list_of(gt.Content).validate_python(body["contents"])
    for i, content in enumerate(contents):
        if content.role not in ("user", "model"):  # the SDK type leaves role a free string
            raise BodyTypeError([(("contents", i, "role"), f"role {content.role!r} is not user/model")])
    if "systemInstruction" in body:
        with _located("systemInstruction"):
            gt.Content.model_validate(body["systemInstruction"])
    if "tools" in body:
        with _located("tools"):
            _list_of(gt.Tool).validate_python(body["tools"])
    if "toolConfig" in body:
        with _located("toolConfig"):
            gt.ToolConfig.model_validate(body["toolConfig"])
    if "generationConfig" in body:
        with _located("generationConfig"):
            gt.GenerationConfig.model_validate(body["generationConfig"])


def compat_body(extensions: Extensions, body: dict[str, Any]) -> None:
    """Validate an OpenAI-compatible vendor's body: its extensions checked by hand, the rest as strict OpenAI Chat."""
    stripped = {k: v for k, v in body.items() if k not in extensions.params}
    thinking = body.get("thinking")
    if thinking is not None and thinking != {"type": "enabled"} and thinking != {"type": "disabled"}:
        raise BodyTypeError([(("thinking",), f"bad thinking param {thinking!r}")])
    messages = []
    for i, msg in enumerate(body["messages"]):
        with _located("messages", i):
            messages.append(_compat_message(extensions, msg))
    openai_chat_body({**stripped, "messages": messages})


def _compat_message(extensions: Extensions, msg: dict[str, Any]) -> dict[str, Any]:
    msg = dict(msg)
    if "reasoning_content" in msg:
        reasoning = msg["reasoning_content"]
        if not extensions.reasoning_content_back or msg["role"] != "assistant" or not isinstance(reasoning, str):
            raise ValueError(f"reasoning_content not allowed here: {msg!r}")
        del msg["reasoning_content"]
    if isinstance(msg.get("content"), list):
        msg["content"] = [_check_extension_part(extensions, part) for part in msg["content"]]
        if msg["role"] != "user" and any(p["type"] != "text" for p in msg["content"]):
            raise ValueError("media parts outside a user message")
    text_only = extensions.string_tool_content and msg["role"] in ("tool", "assistant")
    if text_only and not isinstance(msg.get("content"), str):
        raise ValueError("tool/assistant content must be a string here")
    return msg


def _check_extension_part(extensions: Extensions, part: dict[str, Any]) -> dict[str, Any]:
    allowed = extensions.parts.get(part["type"])
    if allowed is None:
        if extensions.audio_url and part["type"] == "input_audio" and "url" in part["input_audio"]:
            audio = part["input_audio"]
            if set(audio) - {"url", "format"} or not isinstance(audio["url"], str):
                raise ValueError(f"bad input_audio {audio!r}")
            return {"type": "text", "text": "(audio url checked)"}
        return part
    if set(part) != {"type", part["type"]}:
        raise ValueError(f"bad {part['type']} part {part!r}")
    inner = part[part["type"]]
    if not isinstance(inner, dict) or not isinstance(inner.get("url"), str) or set(inner) - allowed:
        raise ValueError(f"bad {part['type']} part {part!r}")
    return {"type": "text", "text": f"({part['type']} checked)"}


def validate_body(dialect: Dialect, body: dict[str, Any]) -> None:
    """Validate ``body`` strictly against the official SDK types of ``dialect``; BodyTypeError on any mistake."""
    with _located():
        dialect.validate_types(body)
