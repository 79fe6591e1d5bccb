"""Histories of n messages in the shapes that once made a dialect's build grow faster than its messages: shared by
the test that counts a build's work (``test_linear``) and the benchmark that times it (``bench/bench_linear.py``)."""

from __future__ import annotations

from collections.abc import Callable

from core import Message, ToolReturn
from tests.providers.builders import call, reply, tool, user


def consecutive_users(n: int) -> list[Message]:
    return [user(f"message {i}", i) for i in range(n)]


def consecutive_assistants(n: int) -> list[Message]:
    return [user("go", 0), *(reply(f"step {i}", i) for i in range(1, n))]


def records_before_results(n: int) -> list[Message]:
    """A streamed agent: one assistant record per call, then all the results (one tool block)."""
    k = n // 2
    calls = [reply(f"call {i}", i, tool_calls=[call(f"c{i}")]) for i in range(k)]
    results = [tool(k + i, ToolReturn(call_id=f"c{i}", name="get_weather", result="ok")) for i in range(k)]
    return [user("go", 0), *calls, *results]


def tool_loop(n: int) -> list[Message]:
    """The usual trace: call, result, call, result."""
    out: list[Message] = [user("go", 0)]
    for i in range(1, n // 2):
        out += [reply("", i, tool_calls=[call(f"c{i}")]), tool(i, ToolReturn(call_id=f"c{i}", result="ok"))]
    return out


SHAPES: list[Callable[[int], list[Message]]] = [
    consecutive_users,
    consecutive_assistants,
    records_before_results,
    tool_loop,
]
