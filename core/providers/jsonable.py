"""The JSON views of a request that the dashboard reads: neutral messages, and msg_id -> body locations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from core.llm.messages import LLMMessage

if TYPE_CHECKING:
    from core.providers.base import RequestContext


def llm_message_json(msg: LLMMessage) -> dict[str, Any]:
    """A neutral message as JSON: its role, then every field (parts and reasoning blocks with their kind)."""
    out: dict[str, Any] = {"role": msg.role}
    for name in msg.__struct_fields__:
        out[name] = _value(getattr(msg, name))
    return out


def _value(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _value(v) for k, v in value.items()}
    if isinstance(value, msgspec.Struct):
        out: dict[str, Any] = {"kind": value.kind} if hasattr(value, "kind") else {}
        for name in value.__struct_fields__:
            out[name] = _value(getattr(value, name))
        return out
    return value


def pointer_token(key: str | int) -> str:
    """One reference token of a JSON pointer (RFC 6901: ``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return str(key).replace("~", "~0").replace("/", "~1")


def provenance_map(body: Any, ctx: RequestContext) -> dict[str, list[str]]:
    """msg_id -> JSON pointers of the tagged nodes of ``body`` (a node under a node of the same msg_id is
    not listed again: the outer pointer already covers it)."""
    found: dict[str, list[str]] = {}
    stack: list[tuple[Any, str, str | None]] = [(body, "", None)]
    while stack:
        node, pointer, inherited = stack.pop()
        tag = ctx.tag_of(node)
        if tag is not False and tag != inherited:
            if tag is not None:
                found.setdefault(str(tag), []).append(pointer)
            inherited = tag if isinstance(tag, str) else None
        if isinstance(node, dict):
            items = node.items()
        elif isinstance(node, list):
            items = enumerate(node)  # type: ignore[assignment]
        else:
            continue
        children = [(v, f"{pointer}/{pointer_token(k)}", inherited) for k, v in items if isinstance(v, dict | list)]
        stack.extend(reversed(children))
    return found
