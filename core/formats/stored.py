"""Neutral LLM messages written back as stored message JSON: the inverse of ``to_llm_request``.

``core.messages`` turns a stored record into ``core.llm`` messages; an import of a foreign format has those
messages and needs the records. Each function here writes the one record whose ``to_llm_request`` gives the
message back (``tests/core/formats/test_stored.py`` holds that round trip).
"""

from __future__ import annotations

from typing import Any, assert_never

from core.llm.messages import (
    LLMAssistantMessage,
    LLMAudioPart,
    LLMFilePart,
    LLMFunctionMessage,
    LLMImagePart,
    LLMMessage,
    LLMReasoningBlock,
    LLMSystemMessage,
    LLMTextPart,
    LLMTFLMessage,
    LLMThinking,
    LLMToolMessage,
    LLMUserMessage,
    LLMUserPart,
    LLMVideoPart,
)

Json = dict[str, Any]


def part_json(part: LLMUserPart) -> Json:
    """One neutral part as a stored MsgPart."""
    if isinstance(part, LLMTextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, LLMImagePart | LLMAudioPart | LLMVideoPart | LLMFilePart):
        out: Json = {"type": part.kind}
        for key in ("url", "path", "data", "media_type", "detail"):
            value = getattr(part, key)
            if value is not None:
                out[key] = value
        if isinstance(part, LLMFilePart) and part.filename is not None:
            out["filename"] = part.filename
        return out
    assert_never(part)


def user_json(message: LLMUserMessage) -> Json:
    """A user turn: a text message when it is one text part, else a multipart message."""
    parts = message.content
    if len(parts) == 1 and isinstance(parts[0], LLMTextPart):
        return {"role": "user", "msg_type": "text", "content": parts[0].text}
    return {"role": "user", "msg_type": "multipart", "content": [part_json(p) for p in parts]}


def _reasoning_json(reasoning: str | tuple[LLMReasoningBlock, ...] | None) -> str | list[Json] | None:
    if reasoning is None or isinstance(reasoning, str):
        return reasoning
    return [
        {"type": "thinking", "thinking": b.thinking, "signature": b.signature}
        if isinstance(b, LLMThinking)
        else {"type": "redacted_thinking", "data": b.data}
        for b in reasoning
    ]


def assistant_json(message: LLMAssistantMessage) -> Json:
    """An assistant turn with its reasoning, tool calls (provider extras kept beside them) and scripts."""
    out: Json = {"role": "assistant", "msg_type": "text", "content": message.content}
    reasoning = _reasoning_json(message.reasoning_content)
    if reasoning is not None:
        out["reasoning_content"] = reasoning
    if message.tool_calls:
        out["tool_calls"] = [
            {**(c.extra or {}), "id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ]
    if message.function_call is not None:
        out["function_call"] = {"name": message.function_call.name, "arguments": message.function_call.arguments}
    if message.tfl_scripts:
        out["tfl_scripts"] = list(message.tfl_scripts)
    return out


def tool_json(message: LLMToolMessage, call_id: str, attachments: tuple[LLMUserPart, ...] = ()) -> Json:
    """One tool result, answering ``call_id`` (the message's own, or the one the assembler paired it with)."""
    result: Json = {
        "call_id": call_id,
        "name": message.name,
        "result": message.content,
        "attachments": [part_json(p) for p in attachments],
        "is_error": message.is_error,
    }
    return {"role": "tool", "tool_reses": [result]}


def message_json(message: LLMMessage) -> Json:
    """Any neutral message as its stored record, without ids or times (the assembler sets those)."""
    if isinstance(message, LLMSystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, LLMUserMessage):
        return user_json(message)
    if isinstance(message, LLMAssistantMessage):
        return assistant_json(message)
    if isinstance(message, LLMToolMessage):
        return tool_json(message, message.tool_call_id or "")
    if isinstance(message, LLMFunctionMessage):
        return {"role": "function", "function_res": {"name": message.name, "result": message.content}}
    if isinstance(message, LLMTFLMessage):
        res: Json = {
            "result": message.content,
            "summary_result": message.summary,
            "attachments": [],
            "meta": message.meta,
        }
        return {"role": "console", "console_reses": [res]}
    assert_never(message)
