"""Suite throughput on the job queue against a stub provider that answers after a fixed delay.

    .venv/bin/python bench/bench_suites.py [--quick] [--conversations 200] [--delay 0.2]
        [--concurrency 1,8,32] [--rounds 3] [--no-pg] [--no-sqlite] [--workers 2]

Figures, not assertions. Each conversation is one job (``final`` mode: one provider request) and
the stub answers every request after ``--delay`` seconds, so a run at concurrency c can at best
finish c / delay conversations per second. For each backend and concurrency it reports
conversations/second, that rate as a fraction of the ideal, and the overhead per job: the time a
job holds a worker slot beyond the stub's delay (queue, bookkeeping, request building, the SDK).
Each setting is measured ``--rounds`` times by the same workers; the median round is reported, with
the range of all rounds (on a shared machine a noisy neighbour moves single runs by 0.1x).

- SQLite: this process runs the queue's worker threads (``suite run``'s own path).
- PostgreSQL (Procrastinate): ``--workers`` ``traceloupe worker`` processes share the jobs, each
  with concurrency c / workers; this process only queues and watches. The target is at least
  0.7 of the ideal at concurrency 32 with 2 workers.

PostgreSQL is the tests' server (``$TRACELOUPE_TEST_PG_URL``, default 127.0.0.1:5432), in a fresh database.
It also reports the CPU time per job of Traceloupe (the driver and the workers), of a PostgreSQL running on
this machine and of the stub: when they add up to the cores' time the wall-clock figures are bounded by
it, not by the queue's waiting.
``--quick``: 24 conversations at concurrency 1 and 8 (a smoke run of a few seconds per backend).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.processes import cpu_seconds, local_postgres_cpu_seconds  # noqa: E402
from core.jobs import JobQueue, JobSettings, queue_for  # noqa: E402
from core.store import Store  # noqa: E402
from core.suites import Suites  # noqa: E402
from core.suites.runner import enqueue_open, watch  # noqa: E402
from tests.replay.web_server import free_port  # noqa: E402
from tests.store.store_pg import create_pg_database, drop_pg_database, pg_database_url  # noqa: E402
from tests.suites import suite_data  # noqa: E402

KEY = "sk-bench-0123456789"


@dataclass(frozen=True)
class Measured:
    """One timed suite run: its wall time and the CPU seconds each party spent meanwhile."""

    seconds: float
    traceloupe_cpu: float
    """This process (queueing and watching) and the workers."""
    postgres_cpu: float
    stub_cpu: float


def measure(
    url: str, count: int, concurrency: int, delay: float, *, workers: int, stub: str, stub_pid: int, rounds: int
) -> list[Measured]:
    """``rounds`` suite runs of ``count`` conversations, each from queueing it to its last outcome (after a warm-up
    run), by the same workers."""
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": f"{stub}/v1"}
    os.environ.update(env)
    with Store.open(url) as store:
        suites = Suites(store)
        external = store.backend == "postgresql" and workers > 0
        processes: list[subprocess.Popen[bytes]] = []
        if external:
            started = min(workers, concurrency)  # concurrency 1 is one worker running one job, not two
            command = [sys.executable, "-m", "web.cli", "worker", "--concurrency", str(concurrency // started)]
            processes = [
                subprocess.Popen(
                    [*command, "--db", url], env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
                for _ in range(started)
            ]
        queue = queue_for(store, JobSettings(concurrency=concurrency, embedded_worker=not external))
        queue.start()  # SQLite: this process's worker threads; PostgreSQL with --workers 0: an embedded worker
        try:
            # Unreported: the SDKs, the price table and the connections load in every worker before the clock.
            _suite_run(suites, queue, min(count, 2 * concurrency * max(workers, 1)), concurrency, delay)
            measured = []
            for _ in range(rounds):
                before = _cpu(processes, stub_pid)
                elapsed = _suite_run(suites, queue, count, concurrency, delay)
                after = _cpu(processes, stub_pid)
                measured.append(Measured(elapsed, *(end - start for start, end in zip(before, after, strict=True))))
            return measured
        finally:
            queue.stop()
            for process in processes:
                process.terminate()
                process.wait(timeout=30)


def _cpu(workers: list[subprocess.Popen[bytes]], stub_pid: int) -> tuple[float, float, float]:
    """CPU seconds so far: Traceloupe's (this process and the workers), a local PostgreSQL's, the stub's."""
    traceloupe = time.process_time() + sum(cpu_seconds(worker.pid) for worker in workers)
    return traceloupe, local_postgres_cpu_seconds(), cpu_seconds(stub_pid)


def _suite_run(suites: Suites, queue: JobQueue, count: int, concurrency: int, delay: float) -> float:
    name = f"bench-{concurrency}-{time.monotonic_ns()}"
    suites.create(name, conversations=[suite_data.conversation_id(i) for i in range(count)])
    run = suites.new_run(name, provider="openai", model=f"stub-slow-{delay}", concurrency=concurrency)
    started = time.time()
    enqueue_open(queue, suites, run)
    done = watch(suites, queue, run.run_id)  # as ``suite run`` watches: its poll is not part of the run's time
    outcomes = {i.outcome for i in done.items}
    if outcomes != {"matched"} or done.finished_at is None:
        raise SystemExit(f"the bench run did not match everywhere: {outcomes}")
    return done.finished_at / 1000 - started  # the run is marked finished as its last outcome is recorded


def report(backend: str, count: int, concurrency: int, delay: float, rounds: list[Measured]) -> None:
    """The median round, and the range of all rounds' fractions of the ideal (a shared machine's noise shows there)."""
    ideal = min(concurrency, count) / delay
    ordered = sorted(rounds, key=lambda r: r.seconds)
    run = ordered[len(ordered) // 2]
    rate = count / run.seconds
    overhead_ms = (run.seconds * min(concurrency, count) / count - delay) * 1000
    per_job = {name: cpu / count * 1000 for name, cpu in (("tl", run.traceloupe_cpu), ("pg", run.postgres_cpu))}
    spread = f" (rounds {count / ordered[-1].seconds / ideal:.2f}-{count / ordered[0].seconds / ideal:.2f}x)"
    print(
        f"{backend:<11} c={concurrency:<3} {count:>4} conversations in {run.seconds:6.2f} s: {rate:6.1f}/s, "
        f"{rate / ideal:4.2f}x of the ideal {ideal:.0f}/s{spread if len(rounds) > 1 else ''}, "
        f"overhead {overhead_ms:6.1f} ms per job; "
        f"CPU per job: Traceloupe {per_job['tl']:5.1f} ms, PostgreSQL {per_job['pg']:4.1f} ms, "
        f"the stub {run.stub_cpu / count * 1000:4.1f} ms",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--rounds", type=int, default=3, help="measured runs per setting; the median is reported")
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument(
        "--workers", type=int, default=2, help="traceloupe worker processes on PostgreSQL (0: a worker in this process)"
    )
    ns = parser.parse_args()
    levels = [int(c) for c in ns.concurrency.split(",")]
    count = ns.conversations
    rounds = max(1, ns.rounds)
    if ns.quick:
        count, levels, rounds = 24, [1, 8], 1
    # The stub runs in a process of its own, so its 200 ms are not stretched by this process's work.
    port = free_port()
    stub_process = subprocess.Popen(
        [sys.executable, "-m", "web.cli", "stub-provider", "--port", str(port)], stderr=subprocess.DEVNULL
    )
    stub = f"http://127.0.0.1:{port}"
    _wait_for(stub)
    try:
        with tempfile.TemporaryDirectory() as folder:
            targets: list[tuple[str, str, bool]] = []
            if not ns.no_sqlite:
                targets.append(("sqlite", str(Path(folder) / "bench.db"), False))
            if not ns.no_pg:
                targets.append(("postgresql", pg_database_url(create_pg_database()), True))
            for backend, url, _ in targets:
                with Store.open(url) as store:
                    suite_data.seed(store, Path(folder), count)
                for concurrency in levels:
                    measured = measure(
                        url, count, concurrency, ns.delay, workers=ns.workers, stub=stub, stub_pid=stub_process.pid,
                        rounds=rounds,
                    )  # fmt: skip
                    label = backend if backend == "sqlite" else f"pg x{ns.workers}" if ns.workers else "pg embedded"
                    report(label, count, concurrency, ns.delay, measured)
            for _, url, is_pg in targets:
                if is_pg:
                    drop_pg_database(url.rsplit("/", 1)[1])
    finally:
        stub_process.terminate()
        stub_process.wait(timeout=30)
    return 0


def _wait_for(base_url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{base_url}/__stub/requests", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise SystemExit(f"the stub provider did not start at {base_url}")


if __name__ == "__main__":
    sys.exit(main())
