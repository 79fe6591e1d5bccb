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
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.timing import best_of_rounds
from bench.trace_fixture import build_trace_message
from core import MESSAGE_ADAPTER
from core.providers import ChatLLM, dialect_names

TARGET_RATIO = 0.5


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--seed", type=int, default=299)
    ns = parser.parse_args(argv)

    data = MESSAGE_ADAPTER.dump_json(build_trace_message(ns.records, ns.seed))
    message = MESSAGE_ADAPTER.validate_json(data)
    contenders: dict[str, Callable[[], object]] = {"load": lambda: MESSAGE_ADAPTER.validate_json(data)}
    warnings: dict[str, int] = {}
    for name in dialect_names():
        llm = ChatLLM(name)
        warnings[name] = len(llm.construct_request_params([message]).warnings)
        contenders[name] = lambda llm=llm: llm.construct_request_params([message])
    # The collector is paused for every contender alike (the door pauses it during the load anyway).
    best = best_of_rounds(ns.repeat, contenders, collector=False)
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
