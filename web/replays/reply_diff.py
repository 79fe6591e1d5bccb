"""Original versus replayed reply: the text word by word, the tool calls structurally; which replies diverged."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from core.messages.convert import text_of
from core.messages.union import Message
from core.providers.diffing import format_change, structural_diff
from core.replay.run import reply_message
from core.store import RunView
from web.timeline import Timeline, msg_anchor


@dataclass(frozen=True, slots=True)
class TextSegment:
    """A piece of a word-level text diff: kept, removed (original only) or added (replay only)."""

    op: Literal["same", "removed", "added"]
    text: str


@dataclass(frozen=True, slots=True)
class ReplyDiff:
    """Original versus replayed reply: the text word by word, the tool calls structurally (ids ignored)."""

    left_label: str
    right_label: str
    text: tuple[TextSegment, ...]
    text_same: bool
    calls: tuple[str, ...]
    calls_same: bool


def reply_diff(left: Message | None, right: Message | None, left_label: str, right_label: str) -> ReplyDiff:
    """The differences a reviewer reads first: what the model said, and which tools it called with what."""
    a, b = _text(left), _text(right)
    segments: list[TextSegment] = []
    words_a, words_b = a.split(" "), b.split(" ")
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=words_a, b=words_b, autojunk=False).get_opcodes():
        if op == "equal":
            segments.append(TextSegment("same", " ".join(words_a[i1:i2])))
            continue
        if i2 > i1:
            segments.append(TextSegment("removed", " ".join(words_a[i1:i2])))
        if j2 > j1:
            segments.append(TextSegment("added", " ".join(words_b[j1:j2])))
    changes = structural_diff(_calls(left), _calls(right))
    return ReplyDiff(
        left_label, right_label, tuple(segments), a == b, tuple(format_change(c) for c in changes), not changes
    )


def _text(msg: Message | None) -> str:
    return "" if msg is None else text_of(msg.content)


def _calls(msg: Message | None) -> list[dict[str, Any]]:
    """Tool calls by name and arguments (parsed when JSON): call ids are new on every run."""
    out: list[dict[str, Any]] = []
    for call in (msg.tool_calls if msg is not None else None) or ():
        try:
            arguments: Any = json.loads(call.arguments) if call.arguments.strip() else {}
        except ValueError:
            arguments = call.arguments
        out.append({"name": call.name, "arguments": arguments})
    return out


def diverged_replies(runs: Iterable[RunView], timeline: Timeline) -> set[str]:
    """The msg_ids of the replies a finished run regenerated differently (its text or its tool calls)."""
    out: set[str] = set()
    for run in runs:
        reply = reply_message(run)
        if reply is None or run.up_to_msg_id is None or run.up_to_msg_id in out:
            continue
        position = timeline.position(msg_anchor(run.up_to_msg_id))
        if position is None:
            continue
        diff = reply_diff(timeline.message(position), reply, "original", "replay")
        if not (diff.text_same and diff.calls_same):
            out.add(run.up_to_msg_id)
    return out
