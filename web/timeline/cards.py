"""Typed card contexts: what a card template may read, and nothing else.

One card per top-level message and per trace record. ``kind`` picks the partial
``templates/timeline/cards/_<kind>.html``; ``body`` is the matching dataclass below. Every
string here is trace data and is rendered through autoescaping only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar, get_args

from core.integrity import Damage
from web.timeline.links import LocationView

CardKind = Literal[
    "user-text",
    "user-image",
    "user-audio",
    "user-video",
    "user-attachment",
    "user-url",
    "user-contact",
    "user-history",
    "user-multipart",
    "assistant-text",
    "tool",
    "console",
    "tfl",
    "system",
    "function",
]
CARD_KINDS: tuple[CardKind, ...] = get_args(CardKind)
ResultT = TypeVar("ResultT")

Placement = Literal["message", "before", "after", "nested"]
"""A top-level message, a trace record before or after its user message, or a message inside a history."""


class FieldText(str):
    """A card's text as shown (clipped when huge), knowing the record field it came from and its whole length.

    A ``str``, so every reader of a card sees the text itself; the template reads ``field`` (a JSON pointer
    into the record, the key of the field route) and ``chars`` to offer the whole value on demand.
    """

    field: str
    chars: int

    def __new__(cls, shown: str, field: str, chars: int) -> FieldText:
        text = super().__new__(cls, shown)
        text.field = field
        text.chars = chars
        return text


@dataclass(frozen=True, slots=True)
class PartView:
    """One MsgPart: text, or a medium with its location and the text a provider gets instead."""

    type: str
    text: str | None = None
    location: LocationView | None = None
    detail: str | None = None
    filename: str | None = None


@dataclass(frozen=True, slots=True)
class TextBody:
    """Plain text: user-text and system cards."""

    text: str


@dataclass(frozen=True, slots=True)
class MediaBody:
    """One medium by path or URL: user-image, user-audio, user-video, user-attachment and user-url cards."""

    medium: str
    location: LocationView


@dataclass(frozen=True, slots=True)
class ContactBody:
    """A contact card: the person's id, name and any other keys they carry."""

    uid: str
    name: str | None
    extra: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class HistoryBody:
    """A forwarded chat history: its messages as nested cards (each with its own trace)."""

    count: int
    cards: tuple[Card, ...]
    hidden: int = 0


@dataclass(frozen=True, slots=True)
class PartsBody:
    """A multipart user message."""

    parts: tuple[PartView, ...]


@dataclass(frozen=True, slots=True)
class ThinkingView:
    """One reasoning block: readable (signed or unsigned) or redacted (opaque data)."""

    status: Literal["signed", "unsigned", "redacted"]
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallView:
    """One tool call, its arguments pretty-printed when they are JSON, and the link to its result."""

    call_id: str
    name: str
    arguments: str
    valid_json: bool
    anchor: str
    result_anchor: str | None
    result_card: str | None
    result_page: str = ""
    """Where the result's card is when this card is shown outside its timeline (a run's page); "" inside it."""

    @property
    def result_href(self) -> str:
        return f"{self.result_page}#{self.result_anchor}"


@dataclass(frozen=True, slots=True)
class AssistantBody:
    """An assistant reply: text, reasoning (a string or blocks), tool calls, a legacy function call, scripts."""

    text: str
    reasoning_text: str | None
    reasoning_blocks: tuple[ThinkingView, ...]
    tool_calls: tuple[ToolCallView, ...]
    function_call: ToolCallView | None
    scripts: tuple[str, ...]

    @property
    def has_reasoning(self) -> bool:
        return bool(self.reasoning_text) or bool(self.reasoning_blocks)


@dataclass(frozen=True, slots=True)
class ToolResultView:
    """One tool result, linked back to the call that asked for it."""

    call_id: str | None
    name: str | None
    text: str
    is_error: bool
    attachments: tuple[PartView, ...]
    anchor: str | None
    call_anchor: str | None
    call_card: str | None


@dataclass(frozen=True, slots=True)
class ConsoleView:
    """One console (TFL interpreter) result."""

    result: str
    summary: str | None
    attachments: tuple[PartView, ...]
    meta: str | None


@dataclass(frozen=True, slots=True)
class ResultsBody(Generic[ResultT]):
    """A tool or console message: its results (or its bare content when it has none)."""

    results: tuple[ResultT, ...]
    text: str


@dataclass(frozen=True, slots=True)
class FunctionBody:
    """A legacy function result."""

    name: str
    result: str


CardBody = (
    TextBody
    | MediaBody
    | ContactBody
    | HistoryBody
    | PartsBody
    | AssistantBody
    | ResultsBody[ToolResultView]
    | ResultsBody[ConsoleView]
    | FunctionBody
)


@dataclass(frozen=True, slots=True)
class Card:
    """One card of the timeline; ``anchor`` is the permalink fragment (``msg-<id>``)."""

    msg_id: str
    anchor: str
    kind: CardKind
    role: str
    msg_type: str | None
    create_ts: int
    when: str
    creator: str | None
    placement: Placement
    parent_id: str | None
    parent_anchor: str | None
    depth: int
    body: CardBody
    damage: Damage | None = None
    metadata: str | None = None
    extra: tuple[str, ...] = field(default=())
    incomplete: str | None = None
    """Why messages may be missing around this one (its span dropped attributes past its SDK's limit)."""
    step_ms: int | None = None
    """Milliseconds between the previous card's stamp and this one's (None for the first card)."""

    @property
    def step(self) -> str:
        """``step_ms`` for reading: "+850 ms", "+4.2 s", "+3 min 5 s", "+2 h 4 min" (negative when out of order)."""
        return format_step(self.step_ms) if self.step_ms is not None else ""


def format_step(ms: int) -> str:
    """A gap between two stamps, signed, in the largest unit that keeps it short."""
    sign, ms = ("−" if ms < 0 else "+"), abs(ms)
    if ms < 1000:
        return f"{sign}{ms} ms"
    if ms < 60_000:
        return f"{sign}{ms / 1000:.1f} s"
    minutes, seconds = divmod(ms // 1000, 60)
    if minutes < 60:
        return f"{sign}{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{sign}{hours} h {minutes} min"
