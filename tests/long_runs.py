"""How hard the slowest property tests search: a share of it in the default test command, all of it when
``TRACELOUPE_LONG_TESTS`` is set (it lengthens the store's torture test too)."""

from __future__ import annotations

import os

LONG_TESTS = bool(os.environ.get("TRACELOUPE_LONG_TESTS"))


def examples(default: int, long: int) -> int:
    """Hypothesis's ``max_examples``: ``default`` in the test command, ``long`` when TRACELOUPE_LONG_TESTS is set."""
    return long if LONG_TESTS else default
