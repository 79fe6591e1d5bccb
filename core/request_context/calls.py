"""Tool calls a trace recorded for a tool its turn was not offered: what ``check`` reports once a context is stored.

A real model calls only the tools its request defined, so such a call means the stored tools are not the ones
the agent sent (or the trace was edited), and a replay with them cannot retrace it. Turns are read as a step
replay reads them (``core.replay.turns``): a top-level user message opens one, its trace records and the
messages after it belong to it until the next user message. Nested histories hold earlier turns and are left
out. The tools that apply are the turn's context's, else the conversation's; a context that lists no tools
says nothing about them, and is not checked against.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.messages.base import BaseMessage
from core.messages.union import Message
from core.messages.user import UserMessage
from core.request_context.stored import StoredRequest


@dataclass(frozen=True, slots=True)
class RecordedCalls:
    """The tool calls one top-level message holds (itself and its trace records), and the turn they belong to."""

    conversation_id: str
    turn: str | None
    calls: tuple[tuple[str, str, str], ...]
    """(JSON path, msg_id of the record, tool name) of each call, in document order."""
    where: str
    """Where the message was read (``file:line``), as the caller names it."""


@dataclass(frozen=True, slots=True)
class UndefinedToolCall:
    """A recorded call of a tool that is not among the tools of its turn's stored context."""

    where: str
    path: str
    msg_id: str
    name: str
    turn: str | None
    defined: tuple[str, ...]

    def explain(self) -> str:
        """One line for a terminal or a page."""
        scope = "the conversation" if self.turn is None else f"turn {self.turn!r}"
        offered = ", ".join(self.defined)
        return (
            f"{self.path} msg_id={self.msg_id}: calls tool {self.name!r}, which is not among the tools stored for "
            f"{scope} ({offered}); a replay cannot retrace it"
        )


class TurnTracker:
    """Follows each conversation's current turn through its messages, in order."""

    def __init__(self) -> None:
        self._turns: dict[str, str] = {}

    def calls(self, message: BaseMessage, root: str, where: str) -> RecordedCalls:
        """The calls of top-level ``message`` (at JSON path ``root``), with the turn it belongs to."""
        if message.role == "user":
            self._turns[message.conversation_id] = message.msg_id
        found: list[tuple[str, str, str]] = []
        records: Sequence[Message] = message.intermediate_trace.records if isinstance(message, UserMessage) else ()
        for path, item in [(root, message), *((f"{root}.intermediate_trace.records[{i}]", r)
                                              for i, r in enumerate(records))]:  # fmt: skip
            found += [(path, item.msg_id, call.name) for call in item.tool_calls or ()]
        return RecordedCalls(message.conversation_id, self._turns.get(message.conversation_id), tuple(found), where)


def request_turn(messages: Sequence[Message], upto: str | None = None) -> str | None:
    """The turn a request is built in: the one that holds ``upto`` (the request that produced that message comes
    before it), or with ``upto`` None the conversation's last turn (the next request). None before any turn."""
    turn: str | None = None
    for message in messages:
        if message.msg_id == upto:
            return turn
        if message.role == "user":
            turn = message.msg_id
        records = message.intermediate_trace.records if isinstance(message, UserMessage) else ()
        if upto is not None and any(record.msg_id == upto for record in records):
            return turn
    return turn


def applying(contexts: Sequence[StoredRequest], conversation_id: str, turn: str | None) -> StoredRequest | None:
    """The context that applies to a turn: its own, else its conversation's (as the store picks it)."""
    mine = [c for c in contexts if c.conversation_id == conversation_id]
    own = next((c for c in mine if turn is not None and c.turn == turn), None)
    return own or next((c for c in mine if c.turn is None), None)


def undefined_tool_calls(
    recorded: Iterable[RecordedCalls], contexts: Sequence[StoredRequest]
) -> list[UndefinedToolCall]:
    """Every recorded call of a tool its turn's stored tools do not define, in the order recorded."""
    out: list[UndefinedToolCall] = []
    for entry in recorded:
        context = applying(contexts, entry.conversation_id, entry.turn)
        if context is None or not context.tools:
            continue
        names = tuple(t.name for t in context.tools)
        out += [
            UndefinedToolCall(entry.where, path, msg_id, name, context.turn, names)
            for path, msg_id, name in entry.calls
            if name not in names
        ]
    return out
