"""Anthropic's wire: the anthropic SDK's client and errors, and a Messages answer read back as the stored reply's
fields. Part of the Anthropic dialect (:mod:`core.providers.dialects.anthropic`)."""

from __future__ import annotations

import json
from typing import Any

from core.messages.objects import RedactedThinkingBlock, ThinkingBlock, ToolCall
from core.providers.wire import ReplyFields, StepUsage, Usage, Wire, int_or_none, posting, sdk_client, sdk_errors

JSON = dict[str, Any]


def parse_reply(data: JSON) -> ReplyFields:
    """A Messages answer: text, thinking blocks (signed or redacted) and tool_use as the stored reply's fields."""
    texts: list[str] = []
    blocks: list[ThinkingBlock | RedactedThinkingBlock] = []
    calls: list[ToolCall] = []
    for block in data["content"]:
        kind = block["type"]
        if kind == "text":
            texts.append(block["text"])
        elif kind == "thinking":
            blocks.append(ThinkingBlock(thinking=block.get("thinking", ""), signature=block.get("signature", "")))
        elif kind == "redacted_thinking":
            blocks.append(RedactedThinkingBlock(data=block.get("data", "")))
        elif kind == "tool_use":
            calls.append(ToolCall(id=block["id"], name=block["name"], arguments=json.dumps(block.get("input", {}))))
    usage = data.get("usage") or {}
    inp, out = usage.get("input_tokens"), usage.get("output_tokens")
    total = inp + out if isinstance(inp, int) and isinstance(out, int) else None
    return (
        {"content": "".join(texts), "reasoning_content": blocks or None, "tool_calls": calls or None},
        Usage(inp, out, total),
        data.get("stop_reason"),
    )


def step_usage(response: JSON) -> StepUsage:
    """The usage of an answer; ``input_tokens`` is the uncached part alone, so cache reads and writes are added."""
    raw = response.get("usage") or {}
    if not isinstance(raw, dict):
        return StepUsage()
    uncached, read = int_or_none(raw.get("input_tokens")), int_or_none(raw.get("cache_read_input_tokens"))
    write = int_or_none(raw.get("cache_creation_input_tokens"))
    total = None if uncached is None else uncached + (read or 0) + (write or 0)
    return StepUsage(total, int_or_none(raw.get("output_tokens")), read, None, write)


MESSAGES_PATH = "/v1/messages"
WIRE = Wire(
    name="anthropic",
    sdk_module="anthropic",
    logger="anthropic",
    client=sdk_client("anthropic", "Anthropic"),
    call=posting(MESSAGES_PATH),  # sent as built: the dialect always sets the max_tokens Messages requires
    errors=sdk_errors("anthropic"),
    parse=parse_reply,
    usage=step_usage,
)
