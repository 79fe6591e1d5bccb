"""Read a provider's answer back into the stored format: an AssistantTextMessage, its usage, why it stopped."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from core.messages.assistant import AssistantTextMessage
from core.messages.objects import RedactedThinkingBlock, ThinkingBlock, ToolCall
from core.providers.dialects.gemini import THOUGHT_SIGNATURE_KEY
from core.replay.endpoints import WireDialect


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider reported them (None where it did not)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """The reply as a stored message, with usage and the provider's stop reason."""

    message: AssistantTextMessage
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None


class MalformedReply(ValueError):
    """The answer is JSON but not the shape the provider documents."""


def parse_reply(
    wire_dialect: WireDialect, data: Any, *, msg_id: str, conversation_id: str, create_ts: int
) -> ParsedReply:
    """The assistant reply inside a provider response body; MalformedReply when it is not there."""
    if not isinstance(data, dict):
        raise MalformedReply("the answer is not a JSON object")
    try:
        if wire_dialect == "openai":
            fields, usage, finish = _openai_chat(data)
        elif wire_dialect == "openai-responses":
            fields, usage, finish = _openai_responses(data)
        elif wire_dialect == "anthropic":
            fields, usage, finish = _anthropic(data)
        else:
            fields, usage, finish = _gemini(data)
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise MalformedReply(f"the answer lacks the expected fields ({type(exc).__name__}: {exc})") from None
    message = AssistantTextMessage(msg_id=msg_id, conversation_id=conversation_id, create_ts=create_ts, **fields)
    return ParsedReply(message=message, usage=usage, finish_reason=finish)


def _openai_chat(data: dict[str, Any]) -> tuple[dict[str, Any], Usage, str | None]:
    choice = data["choices"][0]
    msg = choice["message"]
    calls = [
        ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"].get("arguments") or "")
        for c in msg.get("tool_calls") or []
    ]
    usage = data.get("usage") or {}
    return (
        {
            "content": msg.get("content") or "",
            "reasoning_content": msg.get("reasoning_content"),
            "tool_calls": calls or None,
        },
        Usage(usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens")),
        choice.get("finish_reason"),
    )


def _openai_responses(data: dict[str, Any]) -> tuple[dict[str, Any], Usage, str | None]:
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    for item in data["output"]:
        kind = item.get("type")
        if kind == "message":
            texts += [c.get("text", "") for c in item.get("content", []) if c.get("type") == "output_text"]
        elif kind == "function_call":
            calls.append(ToolCall(id=item["call_id"], name=item["name"], arguments=item.get("arguments") or ""))
        elif kind == "reasoning":
            reasoning += [s.get("text", "") for s in item.get("summary", [])]
    usage = data.get("usage") or {}
    return (
        {"content": "".join(texts), "reasoning_content": "\n".join(reasoning) or None, "tool_calls": calls or None},
        Usage(usage.get("input_tokens"), usage.get("output_tokens"), usage.get("total_tokens")),
        data.get("status"),
    )


def _anthropic(data: dict[str, Any]) -> tuple[dict[str, Any], Usage, str | None]:
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


def _gemini(data: dict[str, Any]) -> tuple[dict[str, Any], Usage, str | None]:
    candidate = data["candidates"][0]
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    for i, part in enumerate((candidate.get("content") or {}).get("parts") or []):
        call = part.get("functionCall") or part.get("function_call")
        if call:
            call_id = call.get("id") or f"gemini-call-{i}"
            # The signature goes back with this call on the next request (core.providers.dialects.gemini reads it).
            signature = part.get("thoughtSignature") or part.get("thought_signature")
            extra = {THOUGHT_SIGNATURE_KEY: signature} if isinstance(signature, str) and signature else {}
            arguments = json.dumps(call.get("args") or {})
            calls.append(ToolCall(id=call_id, name=call["name"], arguments=arguments, **extra))
        elif part.get("thought"):
            thoughts.append(part.get("text", ""))
        elif "text" in part:
            texts.append(part["text"])
    usage = data.get("usageMetadata") or data.get("usage_metadata") or {}
    return (
        {"content": "".join(texts), "reasoning_content": "\n".join(thoughts) or None, "tool_calls": calls or None},
        Usage(usage.get("promptTokenCount"), usage.get("candidatesTokenCount"), usage.get("totalTokenCount")),
        candidate.get("finishReason") or candidate.get("finish_reason"),
    )
