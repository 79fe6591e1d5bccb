"""The request context a conversation (or one turn of it) stored: what its requests carried besides the messages.

One JSONL line ``{"traceloupe_request": {...}}`` holds one (``core/FORMAT.md``): the tools offered, the tool
choice, the provider and model the agent ran on, and the generation parameters. ``read_request`` checks a
line's body and reads it into :class:`StoredRequest`; ``request_json`` writes the neutral form back, which
reads into the same value (the export's round trip); ``to_options`` turns it into the ``RequestOptions`` a
body is built with.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from dataclasses import field as default
from typing import Any

from core.models.reasoning import EFFORTS
from core.providers.base import GenerationParams, NamedToolChoice, RequestOptions, ToolChoice, ToolSpec
from core.providers.request import PARAM_NAMES
from core.request_context.shapes import RequestFieldError, read_tool_choice, read_tools, tool_choice_json, tool_json

REQUEST_FIELDS: tuple[str, ...] = ("conversation_id", "turn", "provider", "model", "tools", "tool_choice", "params")
"""The fields of a context line, in the order ``core/FORMAT.md`` documents them."""

# Ranges every provider's accepted range lies within (OpenAI temperature 0-2, Anthropic 0-1; top_p 0-1 on both):
# a value outside is a mistake in the file, one inside but beyond a provider's is the dialect's to clamp.
TEMPERATURE_RANGE = (0.0, 2.0)
TOP_P_RANGE = (0.0, 1.0)
MAX_TOKENS_LIMIT = 2**31 - 1
MAX_STOP_SEQUENCES = 16


@dataclass(frozen=True, slots=True)
class StoredRequest:
    """The request context of a conversation (``turn`` None) or of the turn opened by user message ``turn``."""

    conversation_id: str
    turn: str | None = None
    provider: str | None = None
    model: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    params: GenerationParams = default(default_factory=GenerationParams)


def read_request(body: Any) -> StoredRequest:
    """A context line's body (the object under ``traceloupe_request``) checked and read; RequestFieldError naming
    the first bad field."""
    if not isinstance(body, Mapping):
        raise RequestFieldError("$", "a request context is a JSON object")
    unknown = sorted(set(body) - set(REQUEST_FIELDS))
    if unknown:
        raise RequestFieldError(unknown[0], f"unknown field; a request context has {', '.join(REQUEST_FIELDS)}")
    conversation_id = _text(body.get("conversation_id"), "conversation_id", required=True)
    assert conversation_id is not None
    tools = read_tools(body["tools"]) if body.get("tools") is not None else ()
    choice = read_tool_choice(body["tool_choice"]) if body.get("tool_choice") is not None else None
    check_tool_choice(tools, choice)
    return StoredRequest(
        conversation_id=conversation_id,
        turn=_text(body.get("turn"), "turn"),
        provider=_text(body.get("provider"), "provider"),
        model=_text(body.get("model"), "model"),
        tools=tools,
        tool_choice=choice,
        params=read_params(body.get("params")),
    )


def check_tool_choice(tools: tuple[ToolSpec, ...], choice: ToolChoice | None, field: str = "tool_choice") -> None:
    """Refuse a tool choice that forces a tool the tools do not define (every provider refuses the body)."""
    if isinstance(choice, NamedToolChoice) and all(t.name != choice.name for t in tools):
        defined = ", ".join(repr(t.name) for t in tools) or "there are none"
        raise RequestFieldError(f"{field}.name", f"names tool {choice.name!r}, not among the tools ({defined})")


def read_params(value: Any, field: str = "params") -> GenerationParams:
    """The generation parameters of ``{"max_tokens", "temperature", "top_p", "stop", "thinking", "effort"}`` (each
    optional), each in its type and a range some provider accepts."""
    if value is None:
        return GenerationParams()
    if not isinstance(value, Mapping):
        raise RequestFieldError(field, "expected a JSON object of generation parameters")
    known = PARAM_NAMES  # a stored context's params keys are the fields' names (core/FORMAT.md lists each)
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise RequestFieldError(f"{field}.{unknown[0]}", f"unknown parameter; known: {', '.join(known)}")
    max_tokens = value.get("max_tokens")
    if max_tokens is not None and (
        not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or not 1 <= max_tokens <= MAX_TOKENS_LIMIT
    ):
        raise RequestFieldError(f"{field}.max_tokens", f"expected a whole number from 1 to {MAX_TOKENS_LIMIT}")
    thinking = value.get("thinking")
    if thinking is not None and not isinstance(thinking, bool):
        raise RequestFieldError(f"{field}.thinking", "expected true or false")
    effort = value.get("effort")
    if effort is not None and effort not in EFFORTS:
        raise RequestFieldError(f"{field}.effort", f"expected one of {', '.join(EFFORTS)}")
    return GenerationParams(
        max_tokens=max_tokens,
        temperature=_number(value.get("temperature"), f"{field}.temperature", TEMPERATURE_RANGE),
        top_p=_number(value.get("top_p"), f"{field}.top_p", TOP_P_RANGE),
        stop=_stop(value.get("stop"), f"{field}.stop"),
        thinking=thinking,
        effort=effort,
    )


def _number(value: Any, at: str, bounds: tuple[float, float]) -> float | None:
    if value is None:
        return None
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RequestFieldError(at, f"expected a number from {low:g} to {high:g}")
    if not low <= value <= high:
        raise RequestFieldError(at, f"{value!r} is out of range ({low:g} to {high:g})")
    return float(value)


def _stop(value: Any, at: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):  # OpenAI takes one stop sequence as a bare string
        value = [value]
    if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
        raise RequestFieldError(at, "expected a JSON array of non-empty strings")
    if len(value) > MAX_STOP_SEQUENCES:
        raise RequestFieldError(at, f"at most {MAX_STOP_SEQUENCES} stop sequences")
    return tuple(value)


def _text(value: Any, at: str, *, required: bool = False) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise RequestFieldError(at, "expected a non-empty string" + ("" if required else " or null"))
    return value


def params_json(params: GenerationParams) -> dict[str, Any]:
    """The neutral JSON of the parameters: only those set, so a default is never written as a value."""
    out: dict[str, Any] = {}
    if params.max_tokens is not None:
        out["max_tokens"] = params.max_tokens
    if params.temperature is not None:
        out["temperature"] = params.temperature
    if params.top_p is not None:
        out["top_p"] = params.top_p
    if params.stop:
        out["stop"] = list(params.stop)
    if params.thinking is not None:
        out["thinking"] = params.thinking
    if params.effort is not None:
        out["effort"] = params.effort
    return out


def request_json(stored: StoredRequest) -> dict[str, Any]:
    """The neutral JSON of a context: what an export writes under ``traceloupe_request``."""
    return {
        "conversation_id": stored.conversation_id,
        "turn": stored.turn,
        "provider": stored.provider,
        "model": stored.model,
        "tools": [tool_json(t) for t in stored.tools],
        "tool_choice": None if stored.tool_choice is None else tool_choice_json(stored.tool_choice),
        "params": params_json(stored.params),
    }


def to_options(stored: StoredRequest, base: RequestOptions, provider: str | None = None) -> RequestOptions:
    """``base`` with what the stored context holds filled in where ``base`` leaves it unset.

    What ``base`` sets wins: tools given on the command line (``tools_source`` "given"), a tool choice, a model
    or a parameter. Stored tools come with ``tools_source`` "stored"; a context with no tools leaves ``base``'s.
    The stored model is used only on the provider it ran on (``provider`` None: any).
    """
    options = base
    if stored.tools and base.tools_source != "given":
        options = replace(options, tools=stored.tools, tools_source="stored")
    same_provider = provider is None or stored.provider is None or stored.provider == provider
    return replace(
        options,
        model=base.model if base.model is not None or not same_provider else stored.model,
        tool_choice=base.tool_choice if base.tool_choice is not None else stored.tool_choice,
        **base.params.over(stored.params).by_name(),
    )
