"""Instructions (callgrind) of one request build per dialect against one typed load of the same trace.

    python bench/bench_instructions.py [--records N] [--dialects gemini,anthropic] [--jobs J]

The machine is shared and its timings swing (bench_providers.py has seen the same tree at 0.43x and
0.52x on two runs): an instruction count does not. Each contender runs in a child process under
``valgrind --tool=callgrind``, once with one measured run and once with two (after one warm-up run
each, hash seed fixed); the difference of the two totals is the instructions of one run, start-up
and trace building cancelled out. The ratio to the load is what the speed target of the provider
builds is checked against (0.5x); wall time also pays for cache misses, so read both benchmarks.
Needs valgrind; each child takes about a minute, two run at once on two cores.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_providers import contenders, verdict
from core.providers import dialect_names

COLLECTED = re.compile(rb"Collected : (\d+)")


def child(contender: str, records: int, seed: int, runs: int) -> None:
    """The measured process: build the trace, run the contender once to warm up, then ``runs`` times."""
    run = contenders(records, seed)[1][contender]
    run()
    gc.disable()  # as bench_providers times them: the collector paused for every contender alike
    for _ in range(runs):
        run()


def instructions(contender: str, records: int, seed: int, runs: int) -> int:
    """Total instructions of a child process that runs ``contender`` ``runs`` times."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        __file__,
        "--child",
        contender,
        "--records",
        str(records),
        "--seed",
        str(seed),
        "--runs",
        str(runs),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, env=env, check=True)
    found = COLLECTED.search(done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count from callgrind for {contender}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=299)
    parser.add_argument("--dialects", default=",".join(dialect_names()), help="comma-separated (default: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, default=1, help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    if ns.child:
        child(ns.child, ns.records, ns.seed, ns.runs)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    dialects = [d for d in ns.dialects.split(",") if d]
    unknown = sorted(set(dialects) - set(dialect_names()))
    if unknown:
        print(f"unknown dialect(s): {', '.join(unknown)}; known: {', '.join(dialect_names())}", file=sys.stderr)
        return 2
    names = ["load", *dialects]
    jobs = [(name, runs) for name in names for runs in (1, 2)]
    with ThreadPoolExecutor(max_workers=ns.jobs) as pool:
        counts = pool.map(lambda job: instructions(job[0], ns.records, ns.seed, job[1]), jobs)
        totals = dict(zip(jobs, counts, strict=True))
    one_run = {name: totals[name, 2] - totals[name, 1] for name in names}
    load = one_run.pop("load")
    print(f"trace: {ns.records:,} records; typed load {load / 1e6:.1f} M instructions (callgrind, one run)")
    print(f"{'dialect':<18}{'M instr':>10}{'x load':>9}")
    for name, count in one_run.items():
        print(f"{name:<18}{count / 1e6:>10.1f}{count / load:>9.3f}")
    print(verdict(max(one_run.values()) / load, digits=3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
