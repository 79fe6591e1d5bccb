"""What the repository returns: small frozen dataclasses, never rows or sessions.

The dashboard, the CLI and replay read these; none of them holds a database
handle, so a template can never open the database by accident.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal, TypeVar, get_args

from core.messages.union import Message

RunStatus = Literal[
    "running", "ok", "error", "http_error", "rate_limited", "timeout", "connection_error", "malformed", "refused"
]
"""``running`` until the run ends; then ``error`` or one of ``core.replay.send.Status`` (pinned by a test)."""
RUN_STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """One row of the conversation list, with the figures it shows."""

    conversation_id: str
    title: str
    """The first user message's text (at most 200 characters); empty when there is none."""
    messages: int
    """Top-level messages."""
    turns: int
    """Top-level user messages."""
    records: int
    """Messages nested in the top-level ones at any depth (trace records, forwarded histories)."""
    damaged: int
    """Damaged records (a bare user/assistant BaseMessage) at any depth, top-level ones included."""
    runs: int
    first_ts: int | None
    last_activity: int | None
    """The latest ``create_ts`` of any message or record, or the start of the latest run, in ms."""


@dataclass(frozen=True, slots=True)
class ConversationPage:
    """One page of the list; ``next_cursor`` fetches the next page, None on the last one."""

    items: tuple[ConversationSummary, ...]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One top-level message: the JSON exactly as imported, and the typed message parsed from it."""

    msg_id: str
    conversation_id: str
    role: str
    msg_type: str | None
    kind: str
    """``role:msg_type`` for subclasses, the role alone for base records (``Message.tag``)."""
    create_ts: int
    records: int
    damaged: int
    source: str
    """Where it was imported from (file name, ``<stdin>``)."""
    line: int | None
    body: dict[str, Any]
    message: Message


@dataclass(frozen=True, slots=True)
class ConversationDetail:
    """A conversation with its messages in order (``create_ts``, then import position)."""

    summary: ConversationSummary
    messages: tuple[StoredMessage, ...]

    @property
    def typed(self) -> tuple[Message, ...]:
        """The messages alone, typed through the Message union, in order: what a replay builds its request from."""
        return tuple(m.message for m in self.messages)


@dataclass(frozen=True, slots=True)
class ConversationJSON:
    """A conversation's figures and its messages' stored JSON as text, in order, not parsed.

    For readers that decode only what they show (the dashboard's timeline): typing a
    10,000-record trace costs far more than the page of it that is on screen.
    """

    summary: ConversationSummary
    bodies: tuple[str, ...]
    """Each top-level message's JSON (``create_ts``, then import position), exactly as ``body`` holds it."""


@dataclass(frozen=True, slots=True)
class ConversationOutline:
    """A conversation's figures and its messages' outlines (``core.store.outline``), in order, as text.

    Each entry is ``(row, outline)``: the message's row id, which :meth:`Store.read_spans` takes
    to read byte ranges of its stored JSON, and its outline's JSON text.
    """

    summary: ConversationSummary
    outlines: tuple[tuple[int, str], ...]


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Token counts a provider reported; any of them may be missing."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    raw: dict[str, Any] | None = None
    """The provider's usage object as it came."""


@dataclass(frozen=True, slots=True)
class NewRun:
    """A run to record as started: the conversation, where it goes, what is sent, and how it is keyed.

    ``up_to_msg_id`` is the last message of the history sent (None: the whole conversation); a retried
    start with the same ``idempotency_key`` returns the run already recorded; ``started_at`` is in
    milliseconds since the epoch (None: now).
    """

    conversation_id: str
    provider: str
    model: str
    request_body: dict[str, Any]
    up_to_msg_id: str | None = None
    idempotency_key: str | None = None
    started_at: int | None = None
    started_by: str | None = None
    """The signed-in account that started it; None on an open dashboard or from the CLI."""


@dataclass(frozen=True, slots=True)
class RunHead:
    """Which run it is, of which conversation, sent where, and where it stands: the first fields of both run views."""

    run_id: str
    conversation_id: str
    up_to_msg_id: str | None
    provider: str
    model: str
    status: RunStatus


@dataclass(frozen=True, slots=True)
class RunView(RunHead):
    """One replay: what was sent, what came back, and how it went."""

    request_body: dict[str, Any]
    response_body: dict[str, Any] | None
    error: str | None
    started_at: int
    finished_at: int | None
    latency_ms: int | None
    usage: TokenUsage
    idempotency_key: str | None
    reply: dict[str, Any] | None = None
    """The answer parsed back into the stored format (an AssistantTextMessage as JSON); None unless ``ok``."""
    started_by: str | None = None
    """The account that started it; None when nobody was signed in."""


@dataclass(frozen=True, slots=True)
class RunSummary(RunHead):
    """A run as its list row and its comparison show it: everything but what was sent and what came back.

    A replay of a long trace sends its whole history, megabytes per run; reading those bodies is
    what ``RunView`` is for.
    """

    error: str | None
    started_at: int
    finished_at: int | None
    latency_ms: int | None
    usage: TokenUsage
    reply: dict[str, Any] | None = None
    """The answer parsed back into the stored format (an AssistantTextMessage as JSON); None unless ``ok``."""
    started_by: str | None = None
    """The account that started it; None when nobody was signed in."""


@dataclass(frozen=True, slots=True)
class ImportSummary:
    """What one import did: a file is all-or-nothing, so these are either its full effect or zeros."""

    source: str
    read: int
    """Top-level messages read from the file."""
    imported: int
    """Messages stored now."""
    skipped: int
    """Messages already stored as they are (same conversation, msg_id and content), or repeated in the file."""
    conversations: int
    """Conversations that received at least one new message."""
    new_conversations: int
    damaged: int
    """Damaged records among the messages stored now."""
    replaced: int = 0
    """Of the messages stored now, those that took the place of another version (``--replace``)."""
    records: Mapping[str, int] = field(default_factory=dict)
    """Records other than messages stored now, by kind (an export's runs, suites...; one already stored is
    skipped), in the order an export writes them."""
    digest_due: tuple[str, ...] = ()
    """Conversations that received messages and hold at least the records asked for (``digest_min_records``):
    those whose pages are worth making ahead, in the background."""

    def line(self) -> str:
        """The one-line summary ``traceloupe import`` prints and the dashboard's import page shows."""
        damaged = f", {self.damaged} damaged record{'s' * (self.damaged != 1)}" if self.damaged else ""
        replaced = f"; {self.replaced} replaced (another version was stored)" if self.replaced else ""
        others = ", ".join(f"{n} {kind}{'s' * (n != 1)}" for kind, n in self.records.items())
        also = f"; also stored {others}" if others else ""
        return (
            f"{self.source}: imported {self.imported} message{'s' * (self.imported != 1)} into {self.conversations} "
            f"conversation{'s' * (self.conversations != 1)} ({self.new_conversations} new){damaged}; "
            f"{self.skipped} already stored{replaced}{also}"
        )

    @staticmethod
    def failure_line(exc: Exception) -> str:
        """The line of a file that could not be imported (its file, line and JSON path are in ``exc``); for
        several bad lines (``InputErrors``), one line each and a last line counting them."""
        return f"{exc} (nothing from this file was stored)"


_View = TypeVar("_View")


def _field_names(view: type[Any]) -> tuple[str, ...]:
    return tuple(f.name for f in fields(view))


def from_row(view: type[_View], row: Any, **values: Any) -> _View:
    """A view from a row: each field the row's column of the same name, but those given in ``values``.

    The store's views name their fields after the columns they show, so the mapping is written once.
    """
    return view(**{name: getattr(row, name) for name in _field_names(view) if name not in values}, **values)


def values_of(view: Any, *skip: str) -> dict[str, Any]:
    """A view's fields by name (but those in ``skip``): the values of the row it is stored as."""
    return {name: getattr(view, name) for name in _field_names(type(view)) if name not in skip}
