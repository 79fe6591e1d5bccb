"""Work that makes a page's digest in the background, in named steps, and how far it has got.

A page whose digest a long trace needs (``web.bodies.preparing``) does not build it on its request:
it starts the steps here, on the app's backlog (``web.backlog``), and answers with how far they are.
Each step has a share of the whole, so the percentage moves as steps end. A failed preparation is
remembered: the page then builds on its request, as a small conversation's does, and shows the error
the build meets.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from web.backlog import Backlog

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Step:
    """One piece of a preparation: what the panel calls it, its share of the whole, and the work."""

    name: str
    share: int
    run: Callable[[], object]


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a preparation is: the step under way and the percentage of the whole done."""

    stage: str
    percent: int
    failed: bool = False


WAITING = Progress("waiting for the server's other work", 0)
"""The backlog is full: the next poll offers the work again."""


class Preparations:
    """Preparations under way (or failed), by key; each runs its steps in order on the backlog."""

    def __init__(self, backlog: Backlog | None, min_records: int) -> None:
        self.backlog = backlog
        self.min_records = min_records
        """Conversations of at least this many records have their page digests prepared, not built on a request."""
        self._lock = threading.Lock()
        self._progress: dict[Hashable, Progress] = {}

    def wanted(self, records: int) -> bool:
        """Whether a conversation of ``records`` records has its digests prepared in the background."""
        return self.backlog is not None and records >= self.min_records

    def start(self, key: Hashable, steps: Sequence[Step]) -> Progress | None:
        """How far the preparation under ``key`` is, started if it is not under way; None when it failed."""
        with self._lock:
            found = self._progress.get(key)
            if found is not None:
                return None if found.failed else found
            first = Progress(steps[0].name, 0)
            self._progress[key] = first
        assert self.backlog is not None, "wanted() said there is a backlog"
        if not self.backlog.submit(("prepare", key), lambda: self._run(key, steps)):
            with self._lock:
                self._progress.pop(key, None)
            return WAITING
        return first

    def _run(self, key: Hashable, steps: Sequence[Step]) -> None:
        total = sum(step.share for step in steps) or 1
        done = 0
        try:
            for step in steps:
                self._set(key, Progress(step.name, done * 100 // total))
                step.run()
                done += step.share
        except Exception:
            log.exception("could not prepare %r", key)
            self._set(key, Progress("failed", done * 100 // total, failed=True))
            return
        with self._lock:  # done: the digest is stored, and readers find it there
            self._progress.pop(key, None)

    def _set(self, key: Hashable, progress: Progress) -> None:
        with self._lock:
            self._progress[key] = progress
