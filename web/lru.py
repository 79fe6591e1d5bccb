"""A small least-recently-used map, shared by the caches of opened conversations and built payloads."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """Entries beyond ``max_items`` (or, with ``weight``, beyond ``max_weight`` in all) leave oldest-used first.

    The newest entry always stays, however heavy. Safe to share between request threads.
    """

    def __init__(self, max_items: int, *, weight: Callable[[V], int] | None = None, max_weight: int = 0) -> None:
        self.max_items = max_items
        self.max_weight = max_weight
        self._weight = weight
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value under ``key``, now the most recently used, or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Store ``value`` as the most recently used, then drop the oldest entries past the bounds."""
        with self._lock:
            items = self._items
            items[key] = value
            items.move_to_end(key)
            while len(items) > 1 and (len(items) > self.max_items or self._too_heavy()):
                items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)

    def _too_heavy(self) -> bool:
        weight = self._weight
        return weight is not None and sum(map(weight, self._items.values())) > self.max_weight
