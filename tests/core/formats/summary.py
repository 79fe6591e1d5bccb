"""A compact picture of imported conversations for the format tests: each message's role and kind, the calls and
the results, so a test states what a real file must give in a few lines."""

from __future__ import annotations

from typing import Any


def shape(message: dict[str, Any]) -> str:
    """``role:kind`` and what it carries: ``assistant:text+2calls``, ``tool:call_1``, ``user:text``."""
    role = message["role"]
    if role == "tool":
        return "tool:" + ",".join(r["call_id"] for r in message["tool_reses"])
    kind = f"{role}:{message['msg_type']}" if "msg_type" in message else role
    calls = message.get("tool_calls") or []
    return kind + (f"+{len(calls)}calls" if calls else "")


def summary(messages: list[dict[str, Any]]) -> list[str]:
    """Every message of a conversation in order, the trace records after their user turn, indented."""
    out: list[str] = []
    for message in messages:
        out.append(shape(message))
        for record in (message.get("intermediate_trace") or {}).get("records") or []:
            out.append("  " + shape(record))
    return out


def tool_calls(messages: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(id, name, arguments) of every call, in order."""
    found = []
    for message in messages:
        for record in [message, *((message.get("intermediate_trace") or {}).get("records") or [])]:
            found.extend((c["id"], c["name"], c["arguments"]) for c in record.get("tool_calls") or [])
    return found
