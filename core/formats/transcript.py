"""Resent histories merged into one transcript: which messages two calls share, compared by meaning, not bytes.

Agents resend the whole history on every model call, so call N's input is call N-1's input and output
plus what came since. Two recordings of one message differ in ways that do not matter (one real export
writes arguments ``""`` in an output and ``"{}"`` for the same call in the next input; instrumentations
drop reasoning from resent turns), so messages are compared by role, text and call id only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from core.llm.messages import (
    MADE_CALL_ID,
    LLMAssistantMessage,
    LLMFunctionMessage,
    LLMMessage,
    LLMSystemMessage,
    LLMTextPart,
    LLMTFLMessage,
    LLMToolCall,
    LLMToolMessage,
    LLMUserMessage,
    LLMUserPart,
)


def _part_key(part: LLMUserPart) -> tuple[str, str]:
    if isinstance(part, LLMTextPart):
        return ("text", part.text.strip())
    return (part.kind, part.location or part.data or "")


def _same_id(a: str | None, b: str | None) -> bool:
    """Ids agree, or one side has none (a source that gives no ids is paired by order and name)."""
    return not a or not b or a == b


def _same_call(a: LLMToolCall, b: LLMToolCall) -> bool:
    """Same name, and the same id unless a reader made one side's id (the source gave none)."""
    made = bool(a.extra and a.extra.get(MADE_CALL_ID)) or bool(b.extra and b.extra.get(MADE_CALL_ID))
    return a.name == b.name and (made or _same_id(a.id, b.id))


def same_message(a: LLMMessage, b: LLMMessage) -> bool:
    """Whether two recordings are the same message: role, text and call ids, nothing else."""
    if a is b:  # a history resent unchanged is read into the same objects
        return True
    if isinstance(a, LLMSystemMessage):
        return isinstance(b, LLMSystemMessage) and a.content.strip() == b.content.strip()
    if isinstance(a, LLMUserMessage):
        return isinstance(b, LLMUserMessage) and [_part_key(p) for p in a.content] == [_part_key(p) for p in b.content]
    if isinstance(a, LLMAssistantMessage):
        if not isinstance(b, LLMAssistantMessage) or a.content.strip() != b.content.strip():
            return False
        if len(a.tool_calls) != len(b.tool_calls):
            return False
        return all(_same_call(x, y) for x, y in zip(a.tool_calls, b.tool_calls, strict=True))
    if isinstance(a, LLMToolMessage):
        return (
            isinstance(b, LLMToolMessage)
            and _same_id(a.tool_call_id, b.tool_call_id)
            and a.content.strip() == b.content.strip()
        )
    if isinstance(a, LLMFunctionMessage):
        return isinstance(b, LLMFunctionMessage) and (a.name, a.content.strip()) == (b.name, b.content.strip())
    if isinstance(a, LLMTFLMessage):
        return isinstance(b, LLMTFLMessage) and a.content.strip() == b.content.strip()
    assert_never(a)


def common_prefix(a: Sequence[LLMMessage], b: Sequence[LLMMessage]) -> int:
    """How many leading messages ``a`` and ``b`` share."""
    n = min(len(a), len(b))
    if tuple(a[:n]) == tuple(b[:n]):  # equal messages are the same message; a resent history is, compared in C
        return n
    n = 0
    for x, y in zip(a, b, strict=False):
        if not same_message(x, y):
            break
        n += 1
    return n


def continues(transcript: Sequence[LLMMessage], messages: Sequence[LLMMessage]) -> bool:
    """Whether one of the two is a prefix of the other: a call that resends this history, or a repeat of part of it."""
    return common_prefix(transcript, messages) == min(len(transcript), len(messages))
