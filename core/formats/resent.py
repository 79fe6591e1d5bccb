"""A call's resent history recognised by one comparison, so that a pass over a call's messages costs its new ones.

Agents resend the whole conversation on every model call: a call's input starts with what the previous call of
its trace sent and answered (or, a retry, with what it sent). Whatever a pass made for that call's messages (where
each sits in a spill, the message each place reads back as) holds for the shared start; the comparison is one
tuple comparison, made in C, which finds the objects a reader shares between calls identical before it compares
any by value. Only equal items are ever taken for shared: a key that names no earlier call of the conversation
costs a comparison and nothing else.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

Item = TypeVar("Item")
Made = TypeVar("Made")

LAST_CALLS = 256
"""Keys (traces) remembered at most, then it starts again: those of the conversations being read."""


class Resent(Generic[Item, Made]):
    """Per key, the last call's items (sent, then answered) and what a pass made for each of them."""

    def __init__(self) -> None:
        self.last: dict[Hashable, tuple[tuple[Item, ...], tuple[Made, ...], int]] = {}

    def start(self, key: Hashable, items: tuple[Item, ...]) -> tuple[int, tuple[Made, ...]]:
        """How many leading ``items`` are the last call's under ``key`` (what it sent and answered, else what it
        sent), and what was made for them (empty when nothing was remembered as made)."""
        known = self.last.get(key)
        if known is None:
            return 0, ()
        whole, made, sent = known
        for n in (len(whole), sent):
            if 0 < n <= len(items) and items[:n] == whole[:n]:
                return n, made[:n]
        return 0, ()

    def remember(
        self, key: Hashable, sent: tuple[Item, ...], answered: tuple[Item, ...], made: tuple[Made, ...] = ()
    ) -> None:
        """A call's items under ``key``, and what was made for each of them (or nothing)."""
        if len(self.last) >= LAST_CALLS and key not in self.last:
            self.last.clear()
        self.last[key] = (sent + answered, made, len(sent))

    def clear(self) -> None:
        self.last.clear()
