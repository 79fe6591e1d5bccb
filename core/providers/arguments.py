"""Tool-call arguments as a provider takes them: an object (kept whole when it is not one) or the model's text."""

from __future__ import annotations

import json
from typing import Any

import orjson

from core.jsonio import dumps, loads
from core.llm.messages import LLMToolCall, parse_arguments
from core.providers.request import RequestContext

# Key that carries tool-call arguments that are not a JSON object to dialects that need an object.
RAW_ARGUMENTS_KEY = "_raw_arguments"


def arguments_object(call: LLMToolCall, msg_id: str | None, ctx: RequestContext) -> dict[str, Any]:
    """Tool-call arguments as an object for dialects that want one (Anthropic ``input``, Gemini ``args``).

    Text that is not a JSON object is kept, not lost: it travels under ``_raw_arguments`` with a warning.
    """
    text = call.arguments
    # The exact reader (integers past 64 bits stay ints, not orjson's floats); what it refuses (NaN, empty
    # text) is decided by the stdlib parser the core uses, so the answer is the same as ``parse_arguments``.
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        parsed = _finite_arguments(call, msg_id, ctx)
        if parsed is None:
            parsed = parse_arguments(text)
    else:
        # orjson alone is exact unless it made a float of a long integer, and a flat object without floats
        # shows it did not: the common arguments skip the exact reader's digit scan (a third of the parse).
        # The check is inline, not a helper: this runs once per tool call of every request.
        if type(parsed) is dict:
            for item in parsed.values():
                kind = type(item)
                if kind is float or kind is dict or kind is list:
                    parsed = loads(text)
                    break
        else:
            parsed = loads(text)
    if type(parsed) is dict:
        return parsed
    ctx.warn(
        msg_id,
        "tool_call.arguments",
        f"call {call.id}: arguments are not a JSON object; sent under {RAW_ARGUMENTS_KEY!r}",
    )
    return {RAW_ARGUMENTS_KEY: call.arguments}


NON_FINITE_LITERALS = frozenset({"NaN", "Infinity", "-Infinity"})
"""What Python's and JavaScript's encoders write for non-finite numbers; not JSON (RFC 8259 section 6)."""
STRICT_JSON_RULE = "strict-json"  # the preflight rule of core/preflight/strict_json.py this fix answers


def _finite_arguments(call: LLMToolCall, msg_id: str | None, ctx: RequestContext) -> dict[str, Any] | None:
    """Arguments holding NaN or Infinity as an object with each such number as the string it was written as
    (a body must be JSON, and a provider answers 400 to one that is not); None when there is none."""
    seen: list[str] = []

    def constant(literal: str) -> str:
        seen.append(literal)
        return literal

    try:
        parsed = json.loads(call.arguments, parse_constant=constant)
    except (ValueError, RecursionError):
        return None
    if not seen or type(parsed) is not dict:
        return None
    ctx.warn(
        msg_id,
        "tool_call.arguments",
        f"call {call.id}: {', '.join(sorted(set(seen)))} in the arguments is not JSON; sent as a string",
        STRICT_JSON_RULE,
    )
    return parsed


def check_arguments_text(call: LLMToolCall, msg_id: str | None, ctx: RequestContext) -> str:
    """Tool-call arguments as text for dialects that want a string: the model's text, verbatim.

    Invalid JSON is sent as it was produced (re-serialising would change what the model said) and noted.
    """
    text = call.arguments
    try:  # the hot path, as in arguments_object
        if type(orjson.loads(text)) is dict:
            return text
    except orjson.JSONDecodeError:
        finite = _finite_arguments(call, msg_id, ctx)
        if finite is not None:
            return dumps(finite).decode()
    if parse_arguments(text) is None:
        ctx.warn(msg_id, "tool_call.arguments", f"call {call.id}: arguments are not a JSON object; sent verbatim")
    elif not text.strip():
        return "{}"
    return text
