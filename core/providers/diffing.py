"""A structural diff of two JSON values (two providers' bodies, two runs), as a list of changes at JSON pointers.

Objects are compared key by key; arrays are aligned with difflib on their items' canonical JSON, so one
inserted message reads as one addition, not as every later message changed. Aligned items that differ
are compared recursively when both are containers of the same kind.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any, Literal

from core.providers.jsonable import pointer_token

Op = Literal["add", "remove", "change"]


@dataclass(frozen=True, slots=True)
class Change:
    """One difference: ``add`` (only right has it), ``remove`` (only left), ``change`` (both, different).

    The pointer is into the right value for an addition and into the left value otherwise;
    for a change, ``right_pointer`` is the same place in the right value when it differs
    (array items aligned across an insertion), so the dashboard can mark both panes.
    """

    op: Op
    pointer: str
    left: Any = None
    right: Any = None
    right_pointer: str | None = None

    @property
    def pointer_right(self) -> str | None:
        """Where this change is in the right value; None for a removal (the right value has nothing there)."""
        if self.op == "remove":
            return None
        return self.pointer if self.right_pointer is None else self.right_pointer

    def to_json(self) -> dict[str, Any]:
        """This change as JSON (the dashboard marks it in both panes by its pointer)."""
        out: dict[str, Any] = {"op": self.op, "pointer": self.pointer}
        if self.op != "add":
            out["left"] = self.left
        if self.op != "remove":
            out["right"] = self.right
        return out


def structural_diff(left: Any, right: Any, pointer: str = "", right_pointer: str | None = None) -> list[Change]:
    """Every difference between two JSON values, in document order."""
    rp = pointer if right_pointer is None else right_pointer
    if isinstance(left, dict) and isinstance(right, dict):
        return _diff_objects(left, right, pointer, rp)
    if isinstance(left, list) and isinstance(right, list):
        return _diff_arrays(left, right, pointer, rp)
    if left == right and type(left) is type(right):
        return []
    return [Change("change", pointer, left, right, _other(pointer, rp))]


def _other(pointer: str, right_pointer: str) -> str | None:
    return None if right_pointer == pointer else right_pointer


def _diff_objects(left: dict[str, Any], right: dict[str, Any], pointer: str, rp: str) -> list[Change]:
    out: list[Change] = []
    for key in list(left) + [k for k in right if k not in left]:
        token = pointer_token(key)
        child, right_child = f"{pointer}/{token}", f"{rp}/{token}"
        if key not in right:
            out.append(Change("remove", child, left[key]))
        elif key not in left:
            out.append(Change("add", right_child, right=right[key]))
        else:
            out.extend(structural_diff(left[key], right[key], child, right_child))
    return out


def _diff_arrays(left: list[Any], right: list[Any], pointer: str, rp: str) -> list[Change]:
    out: list[Change] = []
    keys_left = [_canonical(v) for v in left]
    keys_right = [_canonical(v) for v in right]
    matcher = difflib.SequenceMatcher(a=keys_left, b=keys_right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(paired):
            a, b = left[i1 + k], right[j1 + k]
            here, there = f"{pointer}/{i1 + k}", f"{rp}/{j1 + k}"
            if isinstance(a, dict | list) and type(a) is type(b):
                out.extend(structural_diff(a, b, here, there))
            else:
                out.append(Change("change", here, a, b, _other(here, there)))
        for i in range(i1 + paired, i2):
            out.append(Change("remove", f"{pointer}/{i}", left[i]))
        for j in range(j1 + paired, j2):
            out.append(Change("add", f"{rp}/{j}", right=right[j]))
    return out


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def format_change(change: Change, width: int = 100) -> str:
    """One readable line: ``~ /model: "a" -> "b"``, ``+ /system: [...]``, ``- /messages/0: {...}``."""
    if change.op == "add":
        return f"+ {change.pointer or '/'}: {_short(change.right, width)}"
    if change.op == "remove":
        return f"- {change.pointer or '/'}: {_short(change.left, width)}"
    return f"~ {change.pointer or '/'}: {_short(change.left, width // 2)} -> {_short(change.right, width // 2)}"


def _short(value: Any, width: int) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if width <= 0 or len(text) <= width else text[: max(width - 1, 1)] + "…"
