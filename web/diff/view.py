"""The diff page's view of a request diff (``core.providers.request_diff``): the marks for each pane.

The changes, their causes and the groups come from core, the engine ``traceloupe diff`` and the API use too;
this module only says which node of each pane each change marks, and which card it came from.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.providers import RequestResult
from core.providers.request_diff import ClassifiedChange, Group, RequestDiff, diff_requests
from web.payloads.jsonview import Mark


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
