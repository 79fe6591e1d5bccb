"""Build each dialect's request body for a 10,000-record trace; compare with the typed load of the same trace.

    python bench/bench_providers.py [--records N] [--repeat R] [--seed S] [--tools T]

The trace is one user message whose intermediate_trace holds N records, alternating an assistant turn
(reasoning text and one tool call) and a tool result of 0.1-4 KB (fixed seed). The reference is the
typed load of the same JSON through the one door (``MESSAGE_ADAPTER.validate_json``), measured in the
same process; the target is a build time of at most 0.75x that load time. Best of R rounds, each round
running the load and every dialect once. Each dialect is built twice: with no tools given (they are
inferred from the recorded calls), and ``+tools`` with T tool definitions, a tool choice and sampling
parameters given (default 20), whose cost must stay within 15% of the first.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.timing import best_of_rounds
from bench.trace_fixture import build_trace_message
from core import MESSAGE_ADAPTER
from core.providers import ChatLLM, RequestOptions, ToolSpec, dialect_names

TARGET_RATIO = 0.75
TOOLS_RATIO = 1.15
WITH_TOOLS = "+tools"


def given_tools(count: int) -> RequestOptions:
    """Options with ``count`` tools (the first the trace's own ``search``), a tool choice and sampling parameters."""
    tools = tuple(
        ToolSpec(
            "search" if i == 0 else f"tool_{i}",
            f"Tool number {i}",
            {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}},
        )
        for i in range(count)
    )
    return RequestOptions(tools=tools, tool_choice="auto", tools_source="given", temperature=0.5, stop=("END",))


def contenders(records: int, seed: int, tools: int = 20) -> tuple[bytes, dict[str, Callable[[], Any]]]:
    """The trace's JSON and what is measured on it: ``load`` (the typed load) and two builds per dialect."""
    data = MESSAGE_ADAPTER.dump_json(build_trace_message(records, seed))
    message = MESSAGE_ADAPTER.validate_json(data)
    runs: dict[str, Callable[[], Any]] = {"load": lambda: MESSAGE_ADAPTER.validate_json(data)}
    for name in dialect_names():
        runs[name] = partial(ChatLLM(name).construct_request_params, [message])
        runs[f"{name}{WITH_TOOLS}"] = partial(ChatLLM(name, given_tools(tools)).construct_request_params, [message])
    return data, runs


def verdict(worst: float, digits: int = 2) -> str:
    """The last line of a report: the worst ratio against the target."""
    word = "meets" if worst <= TARGET_RATIO else "misses"
    return f"worst ratio {worst:.{digits}f} {word} the target of {TARGET_RATIO}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--seed", type=int, default=299)
    parser.add_argument("--tools", type=int, default=20)
    ns = parser.parse_args(argv)

    data, runs = contenders(ns.records, ns.seed, ns.tools)
    warnings = {name: len(run().warnings) for name, run in runs.items() if name != "load"}
    # The collector is paused for every contender alike (the door pauses it during the load anyway).
    best = best_of_rounds(ns.repeat, runs, collector=False)
    load_ms = best.pop("load")
    print(f"trace: {ns.records:,} records, {len(data) / 1e6:.1f} MB of JSON; typed load {load_ms:.1f} ms")
    print(f"{'dialect':<18}{'build ms':>10}{'x load':>9}  {'warnings':>9}")
    for name, ms in best.items():
        print(f"{name:<18}{ms:>10.1f}{ms / load_ms:>9.2f}  {warnings[name]:>9,}")
    print(verdict(max(best.values()) / load_ms))
    extra = max(best[f"{name}{WITH_TOOLS}"] / best[name] for name in dialect_names())
    word = "within" if extra <= TOOLS_RATIO else "beyond"
    print(f"{ns.tools} tools given: worst {extra:.2f}x the build without, {word} the {TOOLS_RATIO}x bound")
    return 0


if __name__ == "__main__":
    sys.exit(main())
