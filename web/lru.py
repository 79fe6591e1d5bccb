"""A small least-recently-used map, shared by the caches of opened conversations and built payloads."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


WAIT_STEP_SECONDS = 0.05
"""How long ``get_or_make`` waits at a time for another thread's make (it stays interruptible between waits)."""


class LruCache(Generic[K, V]):
    """Entries beyond ``max_items`` (or, with weights, beyond ``max_weight`` in all) leave oldest-used first.

    An entry's weight is given to ``put`` or computed by ``weight``; without either it weighs nothing.
    The newest entry always stays, however heavy. Safe to share between request threads.
    """

    def __init__(self, max_items: int, *, weight: Callable[[V], int] | None = None, max_weight: int = 0) -> None:
        self.max_items = max_items
        self.max_weight = max_weight
        self._weight = weight
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()
        self._making: dict[K, threading.Lock] = {}

    def get(self, key: K) -> V | None:
        """The value under ``key``, now the most recently used, or None."""
        with self._lock:
            entry = self._items.get(key)
            if entry is None:
                return None
            self._items.move_to_end(key)
            return entry[0]

    def get_or_make(self, key: K, make: Callable[[], V], weight: int | None = None) -> V:
        """The value under ``key``, made with ``make`` (and stored) when missing.

        Threads that miss one key at once make it once: the first makes it, the others wait for it. A
        burst of readers of one long trace then builds it once, not once each (each build holds a
        request's time budget and the trace's memory).
        """
        hit = self.get(key)
        if hit is not None:
            return hit
        with self._lock:
            making = self._making.setdefault(key, threading.Lock())
        while not making.acquire(timeout=WAIT_STEP_SECONDS):
            pass  # a short wait at a time, so a stopped request's thread (web.heavy) can leave between them
        try:
            hit = self.get(key)
            if hit is None:
                hit = make()
                self.put(key, hit, weight)
            return hit
        finally:
            making.release()
            with self._lock:
                if self._making.get(key) is making:
                    del self._making[key]

    def put(self, key: K, value: V, weight: int | None = None) -> None:
        """Store ``value`` as the most recently used, then drop the oldest entries past the bounds."""
        if weight is None:
            weight = self._weight(value) if self._weight is not None else 0
        with self._lock:
            items = self._items
            old = items.pop(key, None)
            if old is not None:
                self._total -= old[1]
            items[key] = (value, weight)
            self._total += weight
            while len(items) > 1 and (len(items) > self.max_items or self._too_heavy()):
                self._total -= items.popitem(last=False)[1][1]

    def __len__(self) -> int:
        return len(self._items)

    @property
    def weight(self) -> int:
        """The weight of every entry held."""
        return self._total

    def _too_heavy(self) -> bool:
        return self.max_weight > 0 and self._total > self.max_weight
