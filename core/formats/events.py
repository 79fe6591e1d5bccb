"""The neutral events every foreign format is read into, before one assembler builds Traceloupe messages.

A format module turns its input (OTLP spans, a provider's request/response log, an agent's transcript) into
these events and nothing else; what conversation a call belongs to and how resent histories merge is the
assembler's job. Messages are the neutral request format of ``core.llm`` (what a dialect's builder takes and
its reader gives back), so a provider body read back and a span's JSON messages meet in one shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from core.llm.messages import LLMMessage
from core.request_context.stored import StoredRequest


@dataclass(frozen=True, slots=True)
class ConversationKey:
    """What ties calls into one conversation, strongest first: the format's conversation or session id, then a
    thread or group id; with neither, the assembler merges calls whose input continues an earlier transcript."""

    conversation: str | None = None
    thread: str | None = None


@dataclass(frozen=True, slots=True)
class SourceRef:
    """Where an event came from, for stable ids and for errors that name the file, the line and the id."""

    path: str
    line: int | None = None
    source_id: str | None = None
    trace: str | None = None
    """The trace (or run) the event sat in: a tool run that names no call pairs with a call of the same trace."""


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One request to a model and its answer.

    ``input`` is the transcript sent (history resent on every call, as agents do); ``output`` the assistant
    messages returned. ``None`` means the content was not captured (instrumentations capture none by
    default), which is reported as missing, never stored as empty turns. ``request`` carries the tools, tool
    choice, provider, model and parameters the call was made with; ``recorded_body`` the provider body as
    sent, when the source kept it (the round trip compares it with the body we build). ``extra`` keeps what
    has no place in the stored format (scores, costs, citations, provider-run tools), so nothing is dropped.
    """

    source: SourceRef
    key: ConversationKey
    input: tuple[LLMMessage, ...] | None
    output: tuple[LLMMessage, ...] | None
    request: StoredRequest | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    recorded_body: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    incomplete: str | None = None
    """Why messages of this call may be missing (its span dropped attributes past the SDK's limit), or None."""


@dataclass(frozen=True, slots=True)
class ToolExecution:
    """A tool run the agent made between model calls (a tool span), paired with its call by id, or by order and
    name when the source gives no id."""

    source: SourceRef
    key: ConversationKey
    name: str
    call_id: str | None
    arguments: str | None
    result: str | None
    is_error: bool = False
    started_at: datetime | None = None
    ended_at: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    incomplete: str | None = None
    """Why this run's arguments or result may be missing (its span dropped attributes), or None."""


Event = ModelCall | ToolExecution
"""Anything a format module yields, in the order its source holds them (the assembler sorts by time and id)."""


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 time (``Z`` or an offset), or None."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def marked_incomplete(events: Iterable[Event], reason: str | None) -> Iterator[Event]:
    """The events, each saying ``reason`` (why its messages may be missing) when there is one."""
    for event in events:
        yield event if reason is None else replace(event, incomplete=reason)
