"""The shared LRU map behind the conversation and payload caches: what it keeps and what it drops first."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from web.lru import LruCache


def test_the_least_recently_used_entry_leaves_first() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the oldest used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert len(cache) == 2


def test_a_key_put_again_is_replaced_not_added() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("a", 2)
    cache.put("b", 3)
    assert (cache.get("a"), cache.get("b"), len(cache)) == (2, 3, 2)


def test_the_weight_bound_drops_old_entries_but_keeps_the_newest_however_heavy() -> None:
    cache: LruCache[str, int] = LruCache(10, weight=lambda v: v, max_weight=10)
    for key, weight in [("a", 4), ("b", 4), ("c", 4)]:
        cache.put(key, weight)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, 4, 4)
    cache.put("huge", 50)
    assert (cache.get("b"), cache.get("c"), cache.get("huge"), len(cache)) == (None, None, 50, 1)


def test_a_weight_given_with_the_entry_counts_toward_the_bound_and_a_replaced_entry_no_longer_does() -> None:
    cache: LruCache[str, str] = LruCache(10, max_weight=10)
    cache.put("a", "x", 6)
    cache.put("a", "y", 6)  # replaces: 6 held, not 12
    cache.put("b", "z", 4)
    assert (cache.get("a"), cache.get("b"), cache.weight) == ("y", "z", 10)
    cache.put("c", "w", 1)
    assert (cache.get("a"), cache.weight) == (None, 5)


def test_threads_missing_one_key_at_once_make_it_once_and_all_get_it() -> None:
    cache: LruCache[str, object] = LruCache(4)
    made: list[object] = []
    started = threading.Event()

    def make() -> object:
        started.set()
        time.sleep(0.3)  # the others arrive while it is being made
        made.append(object())
        return made[-1]

    with ThreadPoolExecutor(8) as pool:
        first = pool.submit(cache.get_or_make, "long", make)
        started.wait(5)
        others = [pool.submit(cache.get_or_make, "long", make) for _ in range(7)]
        values = [first.result(), *(f.result() for f in others)]
    assert len(made) == 1 and all(v is made[0] for v in values)
    assert cache.get_or_make("other", lambda: "fresh") == "fresh"  # another key does not wait for it


def test_a_failed_make_stores_nothing_and_the_next_caller_makes_it_again() -> None:
    cache: LruCache[str, str] = LruCache(4)

    def fail() -> str:
        raise RuntimeError("stopped")

    with pytest.raises(RuntimeError):
        cache.get_or_make("k", fail)
    assert cache.get("k") is None and cache.get_or_make("k", lambda: "v") == "v"
