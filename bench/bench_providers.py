"""Build each dialect's request body for a 10,000-record trace; compare with the typed load of the same trace.

    python bench/bench_providers.py [--records N] [--repeat R] [--seed S]

The trace is one user message whose intermediate_trace holds N records, alternating an assistant turn
(reasoning text and one tool call) and a tool result of 0.1-4 KB (fixed seed). The reference is the
typed load of the same JSON through the one door (``MESSAGE_ADAPTER.validate_json``), measured in the
same process; the target is a build time of at most 0.5x that load time. Best of R rounds, each round
running the load and every dialect once.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import (
    MESSAGE_ADAPTER,
    AssistantTextMessage,
    BaseMessage,
    IntermediateTrace,
    Message,
    TextMessage,
    ToolCall,
    ToolReturn,
)
from core.providers import ChatLLM, dialect_names

TARGET_RATIO = 0.5


def make_trace(records: int, seed: int) -> TextMessage:
    """One user message with ``records`` trace records: assistant (reasoning + one call), tool result, ..."""
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + "     \n"
    items: list[Message] = []
    ts = 1_700_000_000_000
    for i in range(records // 2):
        call_id = f"call_{i:05d}"
        items.append(
            AssistantTextMessage(
                content="" if i % 3 else f"Step {i}: checking.",
                reasoning_content=f"Step {i}: I need more data, so I call the search tool with query {i}.",
                tool_calls=[ToolCall(id=call_id, name="search", arguments=json.dumps({"q": f"query {i}", "k": 5}))],
                msg_id=f"a{i}",
                create_ts=ts + 2 * i + 1,
            )
        )
        size = rng.randint(100, 4096)
        items.append(
            BaseMessage(
                role="tool",
                tool_reses=[ToolReturn(call_id=call_id, name="search", result="".join(rng.choices(alphabet, k=size)))],
                msg_id=f"t{i}",
                create_ts=ts + 2 * i + 2,
            )
        )
    return TextMessage(
        content="Research the question.", msg_id="u0", create_ts=ts, intermediate_trace=IntermediateTrace(records=items)
    )


def timed(fn: Callable[[], object]) -> float:
    """One run of ``fn`` in milliseconds, garbage collection off while timing (for every contender alike)."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1000
    finally:
        gc.enable()


def best_of_rounds(repeat: int, contenders: dict[str, Callable[[], object]]) -> dict[str, float]:
    """The fastest run of each contender over ``repeat`` rounds; a round runs every contender once, so a
    burst of load on a shared machine hits the reference and the dialects alike."""
    best = dict.fromkeys(contenders, float("inf"))
    for _ in range(repeat):
        for name, fn in contenders.items():
            best[name] = min(best[name], timed(fn))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--seed", type=int, default=299)
    ns = parser.parse_args(argv)

    data = MESSAGE_ADAPTER.dump_json(make_trace(ns.records, ns.seed))
    message = MESSAGE_ADAPTER.validate_json(data)
    contenders: dict[str, Callable[[], object]] = {"load": lambda: MESSAGE_ADAPTER.validate_json(data)}
    warnings: dict[str, int] = {}
    for name in dialect_names():
        llm = ChatLLM(name)
        warnings[name] = len(llm.construct_request_params([message]).warnings)
        contenders[name] = lambda llm=llm: llm.construct_request_params([message])
    best = best_of_rounds(ns.repeat, contenders)
    load_ms = best.pop("load")
    print(f"trace: {ns.records:,} records, {len(data) / 1e6:.1f} MB of JSON; typed load {load_ms:.1f} ms")
    print(f"{'dialect':<18}{'build ms':>10}{'x load':>9}  {'warnings':>9}")
    worst = 0.0
    for name, ms in best.items():
        ratio = ms / load_ms
        worst = max(worst, ratio)
        print(f"{name:<18}{ms:>10.1f}{ratio:>9.2f}  {warnings[name]:>9,}")
    verdict = "meets" if worst <= TARGET_RATIO else "misses"
    print(f"worst ratio {worst:.2f} {verdict} the target of {TARGET_RATIO}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
