"""A turn of a conversation and its recorded steps, as a step replay walks them.

A turn is a stored user message with the trace records that answered it: the records
ChatLLM places after it, then the assistant, tool, console and function messages that
follow it at the top level until the next user message. Each assistant record is one
step; the records between it and the next assistant record are its outputs (tool results,
console output), fed back as recorded when the replayed step makes the same calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.errors import MisuseError, UnknownNameError
from core.integrity import Damage, find_damage
from core.messages.base import BaseMessage
from core.messages.objects import ToolReturn
from core.messages.trace import IntermediateTrace
from core.messages.union import Message
from core.messages.user import UserMessage
from core.providers.chat_llm import ChatLLM
from core.providers.registry import default_provider


@dataclass(frozen=True, slots=True)
class RecordedStep:
    """One recorded assistant step (1-based ``index``) and the records that answered its calls."""

    index: int
    message: Message
    outputs: tuple[Message, ...]

    @property
    def is_final(self) -> bool:
        """A step without tool calls is the turn's final answer."""
        return not self.message.tool_calls


@dataclass(frozen=True, slots=True)
class Turn:
    """A user message, its recorded steps, and the expanded history strictly before the first step."""

    user: Message
    steps: tuple[RecordedStep, ...]
    before: tuple[Message, ...]
    """The history as ChatLLM expands it, cut before the first step; traces already placed, so emptied."""
    damage: str | None = None
    """Why the turn cannot be replayed (a damaged record), or None."""


def has_trace(message: Message) -> bool:
    """A user message that carries trace records."""
    return isinstance(message, UserMessage) and bool(message.intermediate_trace.records)


def default_turn(messages: Sequence[Message]) -> str:
    """The last user message that has trace records; MisuseError when there is none."""
    for msg in reversed(messages):
        if has_trace(msg):
            return msg.msg_id
    raise MisuseError("no user message in this conversation has trace records: there is no turn to replay")


def turn_of(messages: Sequence[Message], turn_msg_id: str) -> Turn:
    """The turn of user message ``turn_msg_id``; UnknownNameError / MisuseError when there is none to replay."""
    expanded = ChatLLM(default_provider()).construct_prompt_context(messages)
    history = expanded.messages
    top = next((a for a, _, p, _ in expanded.segments if p == "top" and history[a].msg_id == turn_msg_id), None)
    if top is None:
        raise UnknownNameError(f"no top-level message with msg_id {turn_msg_id!r} in this conversation")
    user = history[top]
    if not isinstance(user, UserMessage) and user.role != "user":
        raise MisuseError(f"{turn_msg_id!r} is a {user.role} message; a turn starts at a user message")
    records: list[Message] = []
    for start, end, placement, of in expanded.segments:
        if start <= top:
            continue
        if placement == "post" and of == turn_msg_id:
            records.extend(history[start:end])
        elif placement == "top" and history[start].role in ("assistant", "tool", "console", "function"):
            records.append(history[start])
        else:
            break
    first = next((i for i, m in enumerate(records) if m.role == "assistant"), None)
    if first is None:
        raise MisuseError(f"user message {turn_msg_id!r} has no recorded assistant step to compare with")
    steps: list[RecordedStep] = []
    for record in records[first:]:
        if record.role == "assistant":
            steps.append(RecordedStep(len(steps) + 1, record, ()))
        else:
            last = steps[-1]
            steps[-1] = RecordedStep(last.index, last.message, (*last.outputs, record))
    cut = next(i for i, m in enumerate(history) if m is records[first])
    damage = _damage([user, *records])
    return Turn(user, tuple(steps), tuple(_emptied(m) for m in history[:cut]), damage)


def rekeyed(outputs: Sequence[Message], call_ids: dict[str, str]) -> list[Message]:
    """Recorded tool outputs answering the replayed calls: each result's call id mapped to the replayed call's id.

    Everything else (the result text, attachments, error flags) is kept as recorded.
    """
    out: list[Message] = []
    for record in outputs:
        update: dict[str, object] = {}
        if record.tool_reses:
            update["tool_reses"] = [
                r.model_copy(update={"call_id": call_ids.get(r.call_id, r.call_id)}) if isinstance(r, ToolReturn) else r
                for r in record.tool_reses
            ]
        legacy = record.additional_kwargs.get("tool_call_id")
        if isinstance(legacy, str) and legacy in call_ids:
            update["additional_kwargs"] = {**record.additional_kwargs, "tool_call_id": call_ids[legacy]}
        out.append(record.model_copy(update=update) if update else record)
    return out


def _emptied(message: Message) -> Message:
    """A user message whose trace ChatLLM has already placed: without it, so it is not placed twice."""
    if isinstance(message, UserMessage) and message.intermediate_trace.records:
        return message.model_copy(update={"intermediate_trace": IntermediateTrace()})
    return message


def _damage(messages: Sequence[BaseMessage]) -> str | None:
    # A trace record is found twice, in its user message's trace and as a record of the turn: once per msg_id.
    first: dict[str, Damage] = {}
    for message in messages:
        for damage in find_damage(message):
            first.setdefault(damage.msg_id, damage)
    found = list(first.values())
    if not found:
        return None
    said = "; ".join(
        f"{d.msg_id} ({d.role} record at {d.path} lost {', '.join(d.lost)}; repair reads it as {d.inferred})"
        for d in found[:3]
    )
    more = f"; and {len(found) - 3} more" if len(found) > 3 else ""
    return f"the turn holds {len(found)} damaged record{'' if len(found) == 1 else 's'} (TFROB-299): {said}{more}"
