"""Timing helpers shared by the benchmarks: interleaved rounds, best run kept.

The machine is shared and noisy, so contenders are timed in rounds that run each one
once: a burst of load hits the reference and the contender alike, and the best run of
each is the least disturbed figure. Ratios measured this way, in one process, are what
the benchmarks report; absolute times are only context.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def timed(fn: Callable[[], object], *, collector: bool = True) -> float:
    """One run of ``fn`` in milliseconds; ``collector=False`` pauses the cyclic GC while it runs."""
    gc.collect()
    if not collector:
        gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1000
    finally:
        if not collector:
            gc.enable()


def best_of_rounds(
    repeat: int, contenders: dict[str, Callable[[], object]], *, collector: bool = True
) -> dict[str, float]:
    """The fastest run (ms) of each contender over ``repeat`` rounds of one run each."""
    best = dict.fromkeys(contenders, float("inf"))
    for _ in range(repeat):
        for name, fn in contenders.items():
            best[name] = min(best[name], timed(fn, collector=collector))
    return best
