"""Suite throughput on the job queue against a stub provider that answers after a fixed delay.

    .venv/bin/python bench/bench_suites.py [--quick] [--conversations 200] [--delay 0.2]
        [--concurrency 1,8,32] [--no-pg] [--no-sqlite] [--workers 2]

Figures, not assertions. Each conversation is one job (``final`` mode: one provider request) and
the stub answers every request after ``--delay`` seconds, so a run at concurrency c can at best
finish c / delay conversations per second. For each backend and concurrency it reports
conversations/second, that rate as a fraction of the ideal, and the overhead per job: the time a
job holds a worker slot beyond the stub's delay (queue, bookkeeping, request building, the SDK).

- SQLite: this process runs the queue's worker threads (``suite run``'s own path).
- PostgreSQL (Procrastinate): ``--workers`` ``traceloupe worker`` processes share the jobs, each
  with concurrency c / workers; this process only queues and watches. The target is at least
  0.7 of the ideal at concurrency 32 with 2 workers.

PostgreSQL is the tests' server (``$TRACELOUPE_TEST_PG_URL``, default 127.0.0.1:5432), in a fresh database.
``--quick``: 24 conversations at concurrency 1 and 8 (a smoke run of a few seconds per backend).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.jobs import JobSettings, queue_for  # noqa: E402
from core.store import Store  # noqa: E402
from core.suites import Suites  # noqa: E402
from core.suites.runner import enqueue_open, watch  # noqa: E402
from tests.store.store_pg import create_pg_database, drop_pg_database, pg_database_url  # noqa: E402
from tests.suites import suite_data  # noqa: E402
from web.devtools.stub_provider import StubServer  # noqa: E402

KEY = "sk-bench-0123456789"


def measure(url: str, count: int, concurrency: int, delay: float, *, workers: int, stub: StubServer) -> float:
    """Seconds from queueing a suite run of ``count`` conversations to its last outcome."""
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": f"{stub.base_url}/v1"}
    os.environ.update(env)
    with Store.open(url) as store:
        suites = Suites(store)
        name = f"bench-{concurrency}-{time.monotonic_ns()}"
        suites.create(name, conversations=[suite_data.conversation_id(i) for i in range(count)])
        postgres = store.backend == "postgresql"
        processes: list[subprocess.Popen[bytes]] = []
        if postgres:
            per_worker = max(1, concurrency // workers)
            command = [sys.executable, "-m", "web.cli", "worker", "--concurrency", str(per_worker), "--db", url]
            processes = [
                subprocess.Popen(command, env={**os.environ, **env}, stdout=subprocess.DEVNULL) for _ in range(workers)
            ]
            time.sleep(2.0)  # the workers connect and import the SDKs before the clock starts
        settings = JobSettings(concurrency=concurrency, embedded_worker=False) if postgres else JobSettings(
            concurrency=concurrency)  # fmt: skip
        queue = queue_for(store, settings)
        if not postgres:
            queue.start()
        try:
            run = suites.new_run(name, provider="openai", model=f"stub-slow-{delay}", concurrency=concurrency)
            started = time.perf_counter()
            enqueue_open(queue, suites, run)
            done = watch(suites, queue, run.run_id, poll=0.05)
            elapsed = time.perf_counter() - started
        finally:
            queue.stop()
            for process in processes:
                process.terminate()
                process.wait(timeout=30)
        outcomes = {i.outcome for i in done.items}
        if outcomes != {"matched"}:
            raise SystemExit(f"the bench run did not match everywhere: {outcomes}")
        return elapsed


def report(backend: str, count: int, concurrency: int, delay: float, seconds: float) -> None:
    rate = count / seconds
    ideal = min(concurrency, count) / delay
    overhead_ms = (seconds * min(concurrency, count) / count - delay) * 1000
    print(
        f"{backend:<10} c={concurrency:<3} {count:>4} conversations in {seconds:6.2f} s: {rate:6.1f}/s, "
        f"{rate / ideal:4.2f}x of the ideal {ideal:.0f}/s, overhead {overhead_ms:6.1f} ms per job"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--workers", type=int, default=2, help="traceloupe worker processes on PostgreSQL")
    ns = parser.parse_args()
    levels = [int(c) for c in ns.concurrency.split(",")]
    count = ns.conversations
    if ns.quick:
        count, levels = 24, [1, 8]
    stub = StubServer().start()
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
                    seconds = measure(url, count, concurrency, ns.delay, workers=ns.workers, stub=stub)
                    label = backend if backend == "sqlite" else f"pg x{ns.workers}"
                    report(label, count, concurrency, ns.delay, seconds)
            for _, url, is_pg in targets:
                if is_pg:
                    drop_pg_database(url.rsplit("/", 1)[1])
    finally:
        stub.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
