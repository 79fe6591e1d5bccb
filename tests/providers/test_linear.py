"""Every dialect builds a request in time linear in its messages.

A dialect that searched its output for each message (Gemini once scanned the whole merged user turn for
every user message: 40,000 consecutive user messages took 22 s) is caught deterministically: the Python
lines a build executes per message must not grow with the history. Work done inside C calls (a list insert, a
string join), which lines do not show, is timed by ``bench/bench_linear.py``: a test asserts no time.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType, SimpleNamespace
from typing import Any

import pytest

from core import Message
from core.providers import ChatLLM, dialect_names, provider_named
from core.providers.diff_causes import Side
from core.providers.request_diff import aligned_diff
from tests.providers.history_shapes import SHAPES


def _lines_per_message(dialect: str, msgs: list[Message]) -> float:
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1  # the call event, then one per line executed
        return trace

    llm = ChatLLM(provider_named(dialect))
    sys.settrace(trace)
    try:
        llm.construct_request_params(msgs)
    finally:
        sys.settrace(None)
    return count / len(msgs)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dialect", dialect_names())
def test_lines_executed_per_message_do_not_grow_with_the_history(
    dialect: str, shape: Callable[[int], list[Message]]
) -> None:
    small, large = (_lines_per_message(dialect, shape(n)) for n in (1_000, 4_000))
    assert large <= small * 1.1, f"{large:.1f} lines per message at 4,000 against {small:.1f} at 1,000"


def _lines_per_turn_of_a_diff(n: int) -> float:
    """Lines a diff executes per turn when the left body has a turn the right lacks after every shared one (a
    message one dialect drops and the other keeps): each such turn's partner search must not scan ahead."""
    left_turns = [{"role": "user", "content": f"m{i // 2}" if i % 2 == 0 else f"only left {i}"} for i in range(2 * n)]
    right_turns = [{"role": "user", "content": f"m{i}"} for i in range(n)]
    left = SimpleNamespace(body={"messages": left_turns}, provenance={}, warnings=[], dialect="left")
    right = SimpleNamespace(body={"messages": right_turns}, provenance={}, warnings=[], dialect="right")
    lside = Side(left, owner_at={f"/messages/{i}": f"m{i // 2}" if i % 2 == 0 else f"x{i}" for i in range(2 * n)})
    rside = Side(right, owner_at={f"/messages/{i}": f"m{i}" for i in range(n)})
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        return trace

    sys.settrace(trace)
    try:
        changes = aligned_diff(left, right, lside, rside)  # type: ignore[arg-type]
    finally:
        sys.settrace(None)
    assert len(changes) == n  # every left-only turn removed, the shared ones equal
    return count / n


def test_lines_a_diff_executes_per_turn_do_not_grow_with_the_history() -> None:
    small, large = _lines_per_turn_of_a_diff(500), _lines_per_turn_of_a_diff(2_000)
    assert large <= small * 1.1, f"{large:.1f} lines per turn at 2,000 against {small:.1f} at 500"
