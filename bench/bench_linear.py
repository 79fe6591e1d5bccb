"""Each dialect's request build per message, 5,000 against 20,000 messages, in the shapes that once grew faster.

    .venv/bin/python bench/bench_linear.py [--repeat 5]

Figures, not assertions. ``tests/providers/test_linear.py`` counts the Python lines a build executes per message,
which is exact but blind to work inside a C call (a list insert, a string join): this times it. For every dialect and
every history shape of ``tests/providers/history_shapes.py``, the best of ``--repeat`` rounds (each building both
sizes once, so a burst of load hits a round, not a size) of the time per message at 5,000 and 20,000 messages; the
ratio of the two is the figure: a linear build stays near 1, the target is at most 2 (a quadratic one gives 4).
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.timing import best_of_rounds
from core.providers import ChatLLM, dialect_names, provider_named
from tests.providers.history_shapes import SHAPES

SMALL, LARGE = 5_000, 20_000
"""1,000 messages fit in the CPU caches and build faster per message than any build keeps up at 20,000."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'dialect':<22}{'shape':<26}{'us/msg at 5,000':>16}{'at 20,000':>12}{'ratio':>8}")
    worst = 0.0
    for shape in SHAPES:
        histories = {n: shape(n) for n in (SMALL, LARGE)}
        for dialect in dialect_names():
            llm = ChatLLM(provider_named(dialect))
            builds = {str(n): partial(llm.construct_request_params, msgs) for n, msgs in histories.items()}
            best = best_of_rounds(args.repeat, builds)
            small, large = best[str(SMALL)] * 1000 / SMALL, best[str(LARGE)] * 1000 / LARGE
            worst = max(worst, large / small)
            print(f"{dialect:<22}{shape.__name__:<26}{small:>16.2f}{large:>12.2f}{large / small:>8.2f}")
    print(f"worst ratio {worst:.2f} (target: at most 2)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
