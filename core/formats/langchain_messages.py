"""LangChain's message shapes, as LangSmith runs record them, turned into the chat shape ``MessageReader`` reads.

Three spellings of one message: the serialized constructor (``{"lc": 1, "type": "constructor", "id": [...,
"AIMessage"], "kwargs": {...}}``, what ``langchain_core.load.dumpd`` writes), ``message_to_dict``'s
``{"type": "ai", "data": {...}}``, and the flat ``{"type": "ai", "content": ...}`` of ``model_dump``. A chat
message (``{"role", "content"}``) passes through as it is. Tool calls are LangChain's ``{"name", "args", "id"}``
(``kwargs.tool_calls``), else the OpenAI ones under ``additional_kwargs.tool_calls``. A ``ToolMessage`` of
``status`` ``"error"`` is an error result. What the chat shape has no place for (a speaker's ``name``, the
provider's ``response_metadata``, ``usage_metadata``, ``invalid_tool_calls``, a tool's ``artifact``) is given by
``unplaced_fields``; the message's own ``id`` is not kept (the run's is).
"""

from __future__ import annotations

from typing import Any

from core.formats.span_fields import arguments_text

# The message class (last part of a constructor id) or ``type`` word, and the chat role it is.
_ROLES: dict[str, str] = {
    "HumanMessage": "user",
    "HumanMessageChunk": "user",
    "AIMessage": "assistant",
    "AIMessageChunk": "assistant",
    "SystemMessage": "system",
    "SystemMessageChunk": "system",
    "ToolMessage": "tool",
    "ToolMessageChunk": "tool",
    "FunctionMessage": "function",
    "ChatMessage": "",  # its own ``role`` field
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "function",
    "chat": "",
}
# Content blocks that restate a tool call LangChain also lists in ``tool_calls`` (Anthropic's ``tool_use``).
_CALL_BLOCKS = ("tool_use", "function_call", "tool_call")
# Fields ``chat_message`` places, and ``id`` (LangChain's message id: the run's own id identifies the call).
_PLACED = frozenset({"content", "tool_calls", "tool_call_id", "type", "id", "role", "status"})


def _class_and_fields(item: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The message class (or type word) and its fields, for any LangChain spelling; None for other dicts."""
    ident = item.get("id")
    if item.get("lc") is not None and isinstance(ident, list) and ident and isinstance(item.get("kwargs"), dict):
        return str(ident[-1]), item["kwargs"]
    kind = item.get("type")
    if isinstance(kind, str) and kind in _ROLES:
        data = item.get("data")
        return kind, data if isinstance(data, dict) and "role" not in item else item
    return None


def is_langchain_message(item: Any) -> bool:
    """Whether ``item`` is a LangChain message in one of its spellings."""
    return isinstance(item, dict) and _class_and_fields(item) is not None and "role" not in item


def _tool_calls(fields: dict[str, Any]) -> list[dict[str, Any]]:
    calls = fields.get("tool_calls")
    if isinstance(calls, list) and calls:
        return [
            {"id": c.get("id"), "name": c.get("name"), "arguments": arguments_text(c.get("args"))}
            for c in calls
            if isinstance(c, dict)
        ]
    extra = fields.get("additional_kwargs")
    legacy = extra.get("tool_calls") if isinstance(extra, dict) else None
    return [c for c in legacy if isinstance(c, dict)] if isinstance(legacy, list) else []


def _content(value: Any, drop_calls: bool) -> Any:
    """Content blocks as ``MessageReader`` reads them: Anthropic's ``tool_result`` names its call ``tool_use_id``."""
    if not isinstance(value, list):
        return value
    out: list[Any] = []
    for block in value:
        if isinstance(block, dict):
            if drop_calls and block.get("type") in _CALL_BLOCKS:
                continue
            if block.get("type") == "tool_result" and "tool_use_id" in block and "id" not in block:
                block = {**block, "id": block["tool_use_id"]}
        out.append(block)
    return out


def _parsed(item: Any) -> tuple[str, str, dict[str, Any]] | None:
    """A LangChain message's class (or type word), chat role and fields; None for a chat message or any other
    value."""
    if not isinstance(item, dict) or "role" in item:
        return None
    found = _class_and_fields(item)
    if found is None:
        return None
    kind, fields = found
    return kind, _ROLES.get(kind) or str(fields.get("role") or "user"), fields


def chat_message(item: Any) -> Any:
    """A LangChain message as a chat message (``role``, ``content``, ``tool_calls``, ``tool_call_id``); any
    other value as it is."""
    found = _parsed(item)
    if found is None:
        return item
    _, role, fields = found
    calls = _tool_calls(fields) if role == "assistant" else []
    message: dict[str, Any] = {"role": role, "content": _content(fields.get("content"), bool(calls))}
    if calls:
        message["tool_calls"] = calls
    if role in ("tool", "function"):
        message["tool_call_id"] = fields.get("tool_call_id")
        message["name"] = fields.get("name")
        if fields.get("status") == "error":
            message["is_error"] = True
    return message


def _holds_nothing(value: Any) -> bool:
    """What LangChain writes for a field left unset (``additional_kwargs`` entries such as ``"refusal": null``)."""
    return value is None or value is False or (isinstance(value, str | list | dict) and not value)


def unplaced_fields(item: Any) -> dict[str, Any] | None:
    """The fields of a LangChain message that ``chat_message`` has no place for, with the message's class;
    None when it holds none (or is not a LangChain message)."""
    found = _parsed(item)
    if found is None:
        return None
    kind, role, fields = found
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if key in _PLACED or _holds_nothing(value) or (key == "name" and role in ("tool", "function")):
            continue
        if key == "additional_kwargs" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if not _holds_nothing(v) and k != "tool_calls"}
            if not value:
                continue
        out[key] = value
    return {"langchain_message": kind, **out} if out else None
