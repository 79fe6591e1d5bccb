"""Work a request leaves for after its response: completing a digest while its build is still held.

A payload or diff page answers with its first window and stores only what it showed. The rest of
the digest is made here, one piece of work at a time on a thread of its own, from the build the
page just made: later windows are then read from the store, and a long trace's build is not needed
again, so it can leave the cache instead of being rebuilt by every reader who scrolls.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Hashable

log = logging.getLogger(__name__)

MAX_WAITING = 16
"""Work past this many waiting pieces is not taken: pages still make what they miss on request, and
no burst of pages can queue hours of work that no time budget bounds."""


class Backlog:
    """Work run one piece at a time, in order, on a daemon thread; a key already waiting or running is not added."""

    def __init__(self, max_waiting: int = MAX_WAITING) -> None:
        self.max_waiting = max_waiting
        self._work: deque[tuple[Hashable, Callable[[], object]]] = deque()
        self._keys: set[Hashable] = set()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, key: Hashable, work: Callable[[], object]) -> bool:
        """Queue ``work`` under ``key``; False when that key is waiting or running, the backlog is full or closed."""
        with self._changed:
            if self._closed or key in self._keys or len(self._work) >= self.max_waiting:
                return False
            self._keys.add(key)
            self._work.append((key, work))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="traceloupe-backlog", daemon=True)
                self._thread.start()
            self._changed.notify_all()
        return True

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is waiting or running (benchmarks and tests); False when ``timeout`` passed first."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._keys, timeout)

    def close(self) -> None:
        """Drop the work still waiting and end the thread after the piece it runs (the app shuts down)."""
        with self._changed:
            self._closed = True
            for key, _ in self._work:
                self._keys.discard(key)
            self._work.clear()
            self._changed.notify_all()

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: bool(self._work) or self._closed)
                if self._closed:
                    return
                key, work = self._work.popleft()
            try:
                work()
            except Exception:  # the page that left it has answered; the next reader makes what is missing
                log.exception("background work %r failed", key)
            finally:
                with self._changed:
                    self._keys.discard(key)
                    self._changed.notify_all()
