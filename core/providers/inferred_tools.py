"""Tool definitions inferred from the recorded calls, for a history that calls tools and was given none.

A body holding tool calls without tool definitions is refused by Anthropic (400 "Requests which include
`tool_use` or `tool_result` blocks must define tools.") and leaves every other model unable to call the
tools again. Each name called gets a permissive schema built from the arguments seen: every key its first
calls passed, typed when all its values share one JSON type, untyped otherwise, none required.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from core.errors import ContractError
from core.llm.messages import LLMAssistantMessage, LLMMessage
from core.messages.union import Message
from core.providers.base import ToolSpec

# JSON type of a parsed argument value (bool before int: bool is an int in Python).
_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)
# The arguments of a tool's first calls make its schema: a long trace repeats them, and reading every call
# would cost a parse per record; a key seen only later is still accepted (no additionalProperties: false).
SAMPLED_CALLS = 20
UNTYPED = "-"  # a key whose values had several JSON types, or null: its schema stays {}


@dataclass(slots=True)
class _Seen:
    """What the calls of one tool name showed: how many, the first message, each argument's JSON type."""

    first_msg_id: str | None
    calls: int = 0
    types: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class InferredTool:
    """A tool inferred from ``calls`` recorded calls, the first in message ``first_msg_id``."""

    spec: ToolSpec
    calls: int
    first_msg_id: str | None


def infer_tools(messages: Iterable[LLMMessage]) -> list[InferredTool]:
    """One tool per name the assistant called, in the order first called (empty when none was called)."""
    seen: dict[str, _Seen] = {}
    for msg in messages:
        if type(msg) is not LLMAssistantMessage or not msg.tool_calls:
            continue
        for call in msg.tool_calls:
            entry = seen.get(call.name)
            if entry is None:
                entry = seen[call.name] = _Seen(msg.msg_id)
            entry.calls += 1
            if entry.calls > SAMPLED_CALLS:
                continue
            for key, value in _arguments(call.arguments).items():
                kind = _json_type(value)
                if entry.types.setdefault(key, kind) != kind:
                    entry.types[key] = UNTYPED
    return [
        InferredTool(ToolSpec(name, parameters=_schema(entry.types)), entry.calls, entry.first_msg_id)
        for name, entry in seen.items()
    ]


def recorded_calls(messages: Iterable[Message]) -> list[LLMMessage]:
    """The assistant turns of stored messages as the request would hold them (a damaged record is skipped: it
    is refused where it is sent, and its calls say nothing reliable about the tools)."""
    out: list[LLMMessage] = []
    for message in messages:
        try:
            formatted = message.to_llm_request()
        except ContractError:
            continue
        for llm in formatted if isinstance(formatted, list) else [formatted]:
            if type(llm) is LLMAssistantMessage and llm.tool_calls:
                out.append(llm)
    return out


def tools_called(messages: Iterable[Message]) -> tuple[ToolSpec, ...]:
    """The tools inferred from every call of ``messages`` (a step replay's whole turn)."""
    return tuple(tool.spec for tool in infer_tools(recorded_calls(messages)))


def _arguments(text: str) -> dict[str, Any]:
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    return parsed if type(parsed) is dict else {}


def _json_type(value: object) -> str:
    for python_type, name in _JSON_TYPES:
        if isinstance(value, python_type):
            return name
    return UNTYPED


def _schema(types: dict[str, str]) -> dict[str, Any]:
    properties = {key: {} if kind == UNTYPED else {"type": kind} for key, kind in types.items()}
    return {"type": "object", "properties": properties}
