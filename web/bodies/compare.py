"""The diff page's view of a request diff (``core.providers.request_diff``): the marks for each pane.

The changes, their causes and the groups come from core, the engine ``traceloupe diff`` and the API use too;
this module only says which node of each pane each change marks, and which card it came from.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.providers import Degradation, RequestResult
from core.providers.diffing import Change
from core.providers.request_diff import ClassifiedChange, Group, RequestDiff, diff_requests
from web.bodies.jsonview import Mark
from web.bodies.windows import Layout, window_id


@dataclass(frozen=True, slots=True)
class Comparison:
    """A request diff and the marks for each pane (JSON pointer -> mark)."""

    diff: RequestDiff
    left_marks: dict[str, Mark]
    right_marks: dict[str, Mark]

    @property
    def changes(self) -> tuple[ClassifiedChange, ...]:
        return self.diff.changes

    @property
    def groups(self) -> tuple[Group, ...]:
        return self.diff.groups


def compare(
    left: RequestResult, right: RequestResult, left_cards: dict[str, str], right_cards: dict[str, str]
) -> Comparison:
    """Diff two requests' bodies; ``*_cards`` map each side's pointers to card anchors (kept on the marks)."""
    diff = diff_requests(left, right)
    left_marks: dict[str, Mark] = {p: Mark(card=a) for p, a in left_cards.items()}
    right_marks: dict[str, Mark] = {p: Mark(card=a) for p, a in right_cards.items()}
    for item in diff.changes:
        change = item.change
        if change.op != "add":
            card = left_cards.get(change.pointer)
            left_marks[change.pointer] = Mark(card, change.op, f"L{item.number}", item.number)
        if change.op != "remove":
            pointer = change.pointer_right or change.pointer
            card = right_cards.get(pointer)
            right_marks[pointer] = Mark(card, change.op, f"R{item.number}", item.number)
    return Comparison(diff, left_marks, right_marks)


LISTED = 50
"""Changes listed per cause at first, and per "show more"."""


@dataclass(frozen=True, slots=True)
class GroupFacts:
    """One cause as the page shows it: its title, why, how many changes, the first warnings (masked)."""

    cause: str
    title: str
    explanation: str
    count: int
    warnings: tuple[tuple[str, Degradation], ...]
    """(side, warning): the first ``LISTED`` of them."""
    warnings_total: int


@dataclass(frozen=True, slots=True)
class ChangeView:
    """A listed change (its line masked) and the windows of each pane that hold it (element ids)."""

    op: str
    number: int
    line: str
    windows: str


@dataclass(frozen=True, slots=True)
class Listing:
    """One cause's changes from ``offset``: at most ``LISTED`` of them, and where the rest start (None at the end)."""

    group: GroupFacts
    changes: list[ChangeView]
    next_offset: int | None

    @property
    def remaining(self) -> int:
        """Changes of the cause after this listing."""
        return self.group.count - self.next_offset if self.next_offset is not None else 0

    @property
    def next_count(self) -> int:
        """How many the next listing holds."""
        return min(self.remaining, LISTED)


def window_ids(change: Change, left: Layout, right: Layout) -> str:
    """The element ids of the windows of each pane that hold ``change``, space-separated."""
    ids = []
    if change.op != "add":
        ids.append(_window(left, "diff-left", change.pointer))
    if change.op != "remove":
        ids.append(_window(right, "diff-right", change.pointer_right or change.pointer))
    return " ".join(i for i in ids if i)


def _window(layout: Layout, pane: str, pointer: str) -> str:
    line = layout.line_of(pointer)
    return window_id(pane, layout.window_of_line(line)) if line is not None else ""
