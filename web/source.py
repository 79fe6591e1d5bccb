"""Where the dashboard gets conversations from: a small protocol and an in-memory implementation.

The store's repository will implement :class:`TimelineSource` too; the web layer
depends only on this protocol, so swapping the in-memory source for the store
changes one argument of ``create_app``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from core import Message, TextMessage, UserMessage
from core.integrity import is_damaged
from core.reader import Record, read_path


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """One row of the conversation list."""

    conversation_id: str
    title: str
    messages: int
    records: int
    damaged: int
    last_ts: int


class TimelineSource(Protocol):
    """Read access to stored conversations, as the timeline needs it.

    Contract:

    - ``conversations()`` lists every conversation, most recent activity first.
    - ``messages(id)`` returns the conversation's top-level messages, each with its
      ``intermediate_trace`` intact, ordered by ``create_ts`` and then by insertion
      order; ``None`` when no conversation has that id. The web layer expands
      traces and pages the cards itself, so an implementation only stores and
      returns messages (parsed through ``core.MESSAGE_ADAPTER``).
    """

    def conversations(self) -> Sequence[ConversationSummary]:
        """Every conversation, most recent activity first."""
        ...

    def messages(self, conversation_id: str) -> Sequence[Message] | None:
        """The top-level messages of one conversation in order, or None when it does not exist."""
        ...


class InMemoryTimelineSource:
    """A TimelineSource over messages held in memory, loaded from JSON/JSONL through ``core.reader``."""

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        grouped: dict[str, list[Message]] = {}
        for message in messages:
            grouped.setdefault(message.conversation_id, []).append(message)
        # sorted() is stable: equal create_ts keep the order they were given in (the file order).
        self._messages = {cid: sorted(msgs, key=lambda m: m.create_ts) for cid, msgs in grouped.items()}
        summaries = [_summary(cid, msgs) for cid, msgs in self._messages.items()]
        self._summaries = sorted(summaries, key=lambda s: (-s.last_ts, s.conversation_id))

    @classmethod
    def from_records(cls, records: Iterable[Record]) -> InMemoryTimelineSource:
        """A source over records from ``core.reader`` (in read order)."""
        return cls(record.message for record in records)

    @classmethod
    def from_paths(cls, paths: Iterable[str | Path]) -> InMemoryTimelineSource:
        """A source over every message in the given .json/.jsonl files; raises core's InputError."""
        return cls(record.message for path in paths for record in read_path(path))

    def conversations(self) -> Sequence[ConversationSummary]:
        return self._summaries

    def messages(self, conversation_id: str) -> Sequence[Message] | None:
        return self._messages.get(conversation_id)


def _summary(conversation_id: str, messages: Sequence[Message]) -> ConversationSummary:
    records = 0
    damaged = 0
    last_ts = 0
    for message in messages:
        last_ts = max(last_ts, message.create_ts)
        damaged += is_damaged(message)
        if isinstance(message, UserMessage):
            for record in message.intermediate_trace.records:
                records += 1
                damaged += is_damaged(record)
                last_ts = max(last_ts, record.create_ts)
    return ConversationSummary(
        conversation_id=conversation_id,
        title=_title(messages),
        messages=len(messages),
        records=records,
        damaged=damaged,
        last_ts=last_ts,
    )


def _title(messages: Sequence[Message], limit: int = 120) -> str:
    """The first user text, on one line: what a reviewer recognises a conversation by."""
    for message in messages:
        if isinstance(message, TextMessage) and message.content.strip():
            line = " ".join(message.content.split())
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return "(no user text)"
