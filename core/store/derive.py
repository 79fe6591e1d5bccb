"""What the store derives from one parsed message: figures, kinds, searchable text and a title.

Computed once at import, outside the write transaction, so the list page reads
stored numbers instead of re-parsing bodies. One walk visits the message and
every message nested in it (trace records, forwarded histories, message-list
content), in document order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from core.integrity import is_damaged
from core.messages.assistant import AssistantTextMessage
from core.messages.base import BaseMessage
from core.messages.convert import text_of
from core.messages.objects import ConsoleResult, ToolReturn
from core.messages.union import Message
from core.messages.user import HistoryMessage, UserMessage
from core.store.jsonio import dumps
from core.store.search_pieces import PieceCutter, SearchPieces

TITLE_MAX_CHARS = 200
"""A title is the first user text, cut here: the list page shows one line of it."""


@dataclass(frozen=True, slots=True)
class Figures:
    """What one top-level message adds to its conversation's list-page figures."""

    records: int
    """Messages nested inside this one at any depth (trace records, histories), not counting itself."""
    damaged: int
    """Damaged records at any depth, this message included (``core.integrity.is_damaged``)."""
    kinds: frozenset[str]
    """Every kind (``user:image``, ``tool``, ...) of this message and of those nested in it."""
    last_ts: int
    """The latest ``create_ts`` of this message and of those nested in it."""
    search_pieces: SearchPieces
    """The readable text of this message and of those nested in it, for substring search, in overlapping pieces
    (``core.store.search_pieces``): one for all but a long trace."""


def children(message: BaseMessage) -> list[Message]:
    """The messages directly inside ``message``: its trace records, then message-list content."""
    out: list[Message] = []
    if isinstance(message, UserMessage):
        out.extend(message.intermediate_trace.records)
    content = message.content
    if isinstance(message, HistoryMessage) or (isinstance(content, list) and content and _is_message(content[0])):
        out.extend(m for m in content if isinstance(m, BaseMessage))
    return out


def _is_message(value: object) -> bool:
    return isinstance(value, BaseMessage)


def walk(message: BaseMessage) -> Iterator[BaseMessage]:
    """``message`` and every message nested in it, depth first, without recursion (deep input is legal)."""
    stack: list[BaseMessage] = [message]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def figures(message: BaseMessage) -> Figures:
    """One walk over ``message`` collecting everything the list page and the search need."""
    tally = FigureTally()
    tally.add(message)
    return tally.figures()


class FigureTally:
    """Figures counted a message at a time, in document order: a long trace's records as they are read."""

    def __init__(self) -> None:
        self.count = 0
        self.damaged = 0
        self.kinds: set[str] = set()
        self.last_ts: int | None = None
        self.texts = PieceCutter()

    def add(self, message: BaseMessage, *, alone: bool = False) -> None:
        """Count ``message`` and (unless ``alone``) every message nested in it."""
        for item in (message,) if alone else walk(message):
            self.count += 1
            if is_damaged(item):
                self.damaged += 1
            self.kinds.add(item.tag)
            self.last_ts = item.create_ts if self.last_ts is None else max(self.last_ts, item.create_ts)
            _collect_text(item, self.texts)

    def figures(self) -> Figures:
        """The figures of the messages counted, the first of them the top one."""
        assert self.last_ts is not None, "no message counted"
        return Figures(
            records=self.count - 1,
            damaged=self.damaged,
            kinds=frozenset(self.kinds),
            last_ts=self.last_ts,
            search_pieces=self.texts.done(),
        )


def _collect_text(message: BaseMessage, out: PieceCutter) -> None:
    """The text a reader would search for: content, reasoning, calls, results, scripts."""
    content = message.content
    if isinstance(content, str):
        out.add(content)
    elif not (isinstance(content, list) and content and _is_message(content[0])):
        out.add(text_of(content))
    if isinstance(message, AssistantTextMessage):
        reasoning = message.reasoning_content
        if isinstance(reasoning, str):
            out.add(reasoning)
        elif reasoning:
            for block in reasoning:
                out.add(getattr(block, "thinking", ""))
    for call in message.tool_calls or ():
        out.add(f"{call.name} {call.arguments}")
    for res in message.tool_reses or ():
        out.add(res.result if isinstance(res, ToolReturn) else res)
    for console in message.console_reses or ():
        if isinstance(console, ConsoleResult):
            out.add(console.result)
            out.add(console.summary_result or "")
        else:
            out.add(console)
    if message.function_call is not None:
        out.add(f"{message.function_call.name} {message.function_call.arguments}")
    if message.function_res is not None:
        out.add(message.function_res.result)
    for script in message.tfl_scripts or ():
        out.add(script)


def title_of(message: BaseMessage) -> str | None:
    """The title a top-level user message gives its conversation (its text), or None for other roles."""
    if message.role != "user":
        return None
    text = " ".join(text_of(message.content).split())
    return text[:TITLE_MAX_CHARS]


def derived_msg_id(raw: dict[str, Any]) -> str:
    """A stable id for a legacy record without ``msg_id``: a hash of its canonical JSON.

    The parser would give such a record a fresh random id, so importing the same file
    twice would store it twice; hashing the content keeps re-import a no-op and survives
    export (the exported body still has no ``msg_id`` and hashes the same).
    """
    digest = hashlib.sha256(dumps(raw, sort_keys=True)).hexdigest()
    return f"sha256:{digest[:40]}"
