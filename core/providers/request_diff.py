"""The diff of two dialects' requests for one conversation: what ``traceloupe diff``, the diff page and its API show.

Turns are paired by the message they came from (the provenance map), not by index; every other key of the
bodies is compared key by key (``core.providers.diffing``). Each change gets its likely cause
(``core.providers.diff_causes``) and the changes are grouped by cause, with the adapters' warnings that speak of
each cause beside them.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

from core.providers.base import Degradation
from core.providers.chat_llm import RequestResult
from core.providers.diff_causes import CAUSES, ORDER, TURN_LISTS, Cause, Side, classify, warning_cause
from core.providers.diffing import Change, format_change, structural_diff

PAGE_LINE_WIDTH = 140
"""How many characters of a changed value a listed change shows on the page."""


@dataclass(frozen=True, slots=True)
class ClassifiedChange:
    """One change with its number (its place in the diff, for the marks in both panes) and its cause."""

    number: int
    change: Change
    cause: Cause

    @property
    def line(self) -> str:
        """The change on one line, as the page lists it."""
        return format_change(self.change, PAGE_LINE_WIDTH)

    def to_json(self) -> dict[str, Any]:
        """The change as JSON: op, pointers (``right_pointer``: where it is in the right body), values, cause."""
        return {**self.change.to_json(), "right_pointer": self.change.pointer_right, "cause": self.cause}


@dataclass(frozen=True, slots=True)
class Group:
    """The changes of one cause, with its explanation and the warnings (dialect, warning) that speak of it."""

    cause: Cause
    changes: tuple[ClassifiedChange, ...]
    warnings: tuple[tuple[str, Degradation], ...]

    @property
    def title(self) -> str:
        return CAUSES[self.cause][0]

    @property
    def explanation(self) -> str:
        return CAUSES[self.cause][1]


@dataclass(frozen=True, slots=True)
class RequestDiff:
    """Two requests compared: every change in order with its cause, and the changes grouped by cause."""

    left: RequestResult
    right: RequestResult
    changes: tuple[ClassifiedChange, ...]
    groups: tuple[Group, ...]

    @property
    def counts(self) -> dict[str, int]:
        """How many changes each cause has (causes without a change left out), in the groups' order."""
        return {g.cause: len(g.changes) for g in self.groups if g.changes}

    def changes_json(self) -> list[dict[str, Any]]:
        """Every change as JSON, in order."""
        return [item.to_json() for item in self.changes]


def diff_requests(left: RequestResult, right: RequestResult) -> RequestDiff:
    """Compare two built requests (the dialects may be the same): changes, causes and groups."""
    lside, rside = Side.of(left), Side.of(right)
    changes = tuple(
        ClassifiedChange(i, change, classify(change, lside, rside))
        for i, change in enumerate(aligned_diff(left, right, lside, rside))
    )
    # The same provider on both sides warns the same things once, not once a side.
    same_warnings = left.dialect == right.dialect and left.warnings == right.warnings
    sides = ((left.dialect, left),) if same_warnings else ((left.dialect, left), (right.dialect, right))
    groups: list[Group] = []
    for cause in ORDER:
        members = tuple(c for c in changes if c.cause == cause)
        warned = tuple((side, w) for side, result in sides for w in result.warnings if warning_cause(w) == cause)
        if members or warned:
            groups.append(Group(cause, members, warned))
    return RequestDiff(left, right, changes, tuple(groups))


def _turn_list(body: Any) -> str | None:
    """The key of the body's list of turns (``messages``, ``contents`` or ``input``), if it has one."""
    if isinstance(body, dict):
        for key in TURN_LISTS:
            if isinstance(body.get(key), list):
                return key
    return None


def _turn_owners(side: Side, key: str, count: int) -> list[set[str]]:
    owners: list[set[str]] = [set() for _ in range(count)]
    prefix = f"/{key}/"
    for pointer, owner in side.owner_at.items():
        if pointer.startswith(prefix):
            index = pointer[len(prefix) :].split("/", 1)[0]
            if index.isdigit() and int(index) < count:
                owners[int(index)].add(owner)
    return owners


def aligned_diff(left: RequestResult, right: RequestResult, lside: Side, rside: Side) -> list[Change]:
    """The changes between two bodies, with turns aligned by the messages they came from.

    Two dialects rarely put a message at the same index (a system message in the list or not, tool results
    merged into one turn or not), so comparing turn ``i`` with turn ``i`` pairs unrelated messages. Turns are
    paired instead when they hold the same message (the provenance map), in order; a turn without a partner
    is an addition or a removal; everything else in the body is compared key by key.
    """
    lkey, rkey = _turn_list(left.body), _turn_list(right.body)
    if lkey is None or rkey is None:
        return structural_diff(left.body, right.body)
    lturns, rturns = left.body[lkey], right.body[rkey]
    rest_left = {k: v for k, v in left.body.items() if k != lkey}
    rest_right = {k: v for k, v in right.body.items() if k != rkey}
    changes = structural_diff(rest_left, rest_right)
    lown, rown = _turn_owners(lside, lkey, len(lturns)), _turn_owners(rside, rkey, len(rturns))
    turns_of = _turns_by_owner(rown)
    j = 0  # the first right turn not yet paired or added
    for i, turn in enumerate(lturns):
        match = _partner(lown[i], turns_of, j)
        if match is None and not lown[i] and j < len(rturns) and not rown[j]:
            match = j  # two untagged turns (placeholders) at the same place
        if match is None:
            changes.append(Change("remove", f"/{lkey}/{i}", turn))
            continue
        changes.extend(Change("add", f"/{rkey}/{k}", right=rturns[k]) for k in range(j, match))
        changes.extend(structural_diff(turn, rturns[match], f"/{lkey}/{i}", f"/{rkey}/{match}"))
        j = match + 1
    changes.extend(Change("add", f"/{rkey}/{k}", right=rturns[k]) for k in range(j, len(rturns)))
    return changes


def _turns_by_owner(owners: list[set[str]]) -> dict[str, list[int]]:
    """Message id -> the turns holding it, in order: a turn's partner is looked up, not searched for."""
    turns_of: dict[str, list[int]] = {}
    for k, held in enumerate(owners):
        for owner in held:
            turns_of.setdefault(owner, []).append(k)
    return turns_of


def _partner(owners: set[str], turns_of: dict[str, list[int]], first: int) -> int | None:
    """The first turn at or after ``first`` holding one of ``owners`` (None: none does)."""
    found: int | None = None
    for owner in owners:
        turns = turns_of.get(owner)
        if turns:
            at = bisect_left(turns, first)
            if at < len(turns) and (found is None or turns[at] < found):
                found = turns[at]
    return found
