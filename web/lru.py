"""A small least-recently-used map, shared by the caches of opened conversations and built payloads."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


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

    def get(self, key: K) -> V | None:
        """The value under ``key``, now the most recently used, or None."""
        with self._lock:
            entry = self._items.get(key)
            if entry is None:
                return None
            self._items.move_to_end(key)
            return entry[0]

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
