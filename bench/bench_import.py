"""Import benchmark: a very large trace and many small conversations, streamed, on both backends.

    .venv/bin/python bench/bench_import.py [--records 100000] [--conversations 20000] [--pg URL]
        [--no-pg] [--no-sqlite] [--no-trace] [--no-bulk]

Figures, not assertions. Each import runs ``traceloupe import`` in a child process of its own, so its
peak RSS (``VmHWM``) is the import's alone; the parent then reads back the rows it stored and
times bench_store.py's floor (a bare executemany of exactly those rows, search rows included, into a fresh
database).

1. Trace: one message whose trace holds ``--records`` records (``bench/trace_fixture.py``; 100,000
   records are one JSONL line of about 160 MB). On PostgreSQL the database is created with
   ``ALTER DATABASE ... SET statement_timeout = '30s'``, as a server with that default would have:
   the import must set its own. Printed: seconds, peak RSS (target < 400 MB) and the ratio of the
   import's time to the floor's (target <= 2).
2. Bulk: ``--conversations`` small conversations (a question and its answer each) in one file:
   messages per second (target 4,500, as ``bench_million.py``'s loads), the floor's for context: the floor writes
   rows already made, where the import reads, validates and derives them.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from bench.bench_store import backend_flags, floor_rate, pg_database, read_stored  # noqa: E402
from core.store import Store  # noqa: E402
from core.store.settings import EngineSettings  # noqa: E402

SERVER_TIMEOUT = "30s"
MAX_LINE_MIB = 1024


def write_trace(path: Path, records: int) -> None:
    """One message whose trace holds ``records`` records, on one JSONL line."""
    from bench.trace_fixture import build_trace_message
    from core import MESSAGE_ADAPTER

    path.write_bytes(MESSAGE_ADAPTER.dump_json(build_trace_message(records)) + b"\n")


def write_small_conversations(path: Path, conversations: int) -> int:
    """``conversations`` conversations of two messages each (a question, its answer); the messages written."""
    with path.open("wb") as out:
        for i in range(conversations):
            cid = f"bulk-{i:07d}"
            ts = 1_700_000_000_000 + 2 * i
            question = {"role": "user", "msg_type": "text", "content": f"question {i} about the weather"}
            answer = {"role": "assistant", "msg_type": "text", "content": f"answer {i}: sunny, 21 degrees"}
            out.write(orjson.dumps({**question, "conversation_id": cid, "msg_id": "q", "create_ts": ts}) + b"\n")
            out.write(orjson.dumps({**answer, "conversation_id": cid, "msg_id": "a", "create_ts": ts + 1}) + b"\n")
    return 2 * conversations


def child_import(url: str, path: str) -> None:
    """In the child: ``traceloupe import``, then its seconds and peak RSS as one JSON line on stdout."""
    import contextlib
    import io

    from web.cli import main

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()) as said:
        code = main(["import", path, "--db", url, "--max-line-mib", str(MAX_LINE_MIB)])
    elapsed = time.perf_counter() - start
    peak_mb = peak_rss_mb()
    print(json.dumps({"code": code, "seconds": elapsed, "peak_mb": peak_mb, "said": said.getvalue()}))


def peak_rss_mb() -> float:
    """This process's peak RSS since it started its program: ``VmHWM``. Not ``ru_maxrss``, which a child keeps
    from the parent it was forked from (the parent holds the generated trace)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # not Linux: an upper bound


def run_import(url: str, path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", url, str(path)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit(f"the import failed:\n{done.stdout}\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if result["code"] != 0:
        raise SystemExit(f"the import failed (exit {result['code']}):\n{result['said']}\n{done.stderr}")
    return result


def bench(label: str, new_url: Callable[[], str], path: Path, messages: int) -> None:
    url = new_url()
    result = run_import(url, path)
    print(f"  import: {result['seconds']:.2f} s, peak RSS {result['peak_mb']:.0f} MB", flush=True)
    # The bench's own read-back is no import: the server's statement_timeout must not cut it on a busy machine.
    with Store.open(url, settings=EngineSettings(statement_timeout_ms=0)) as store:
        stored, backend = read_stored(store), store.backend
    assert len(stored.messages) == messages, (len(stored.messages), messages)
    floor = floor_rate(new_url(), stored)
    del stored
    seconds, floor_seconds = result["seconds"], messages / floor
    mb = path.stat().st_size / 1e6
    # The floor bounds the trace's import; many small conversations are held to a rate instead (bench_million.py).
    target = "(target <= 2)" if messages == 1 else f"(target: {BULK_TARGET:,} msg/s)"
    print(
        f"[{backend}] {label}: {messages:,} messages in {seconds:.2f} s ({messages / seconds:,.0f} msg/s, "
        f"{mb / seconds:.1f} MB/s), peak RSS {result['peak_mb']:.0f} MB (target < 400); "
        f"floor {floor_seconds:.2f} s ({floor:,.0f} msg/s); import/floor time {seconds / floor_seconds:.2f} {target}"
    )


BULK_TARGET = 4_500
"""Messages per second of a bulk import of small conversations: five times the 0.9 thousand of the streamed import's
predecessor."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--conversations", type=int, default=20_000)
    backend_flags(parser)
    parser.add_argument("--no-trace", action="store_true")
    parser.add_argument("--no-bulk", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("URL", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_import(*args.child)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        inputs: list[tuple[str, Path, int]] = []
        if not args.no_trace:
            trace = work / "trace.jsonl"
            write_trace(trace, args.records)
            print(f"input: one message of {args.records:,} trace records, {trace.stat().st_size / 1e6:.1f} MB")
            inputs.append((f"trace of {args.records:,} records", trace, 1))
        if not args.no_bulk:
            bulk = work / "bulk.jsonl"
            n = write_small_conversations(bulk, args.conversations)
            print(f"input: {args.conversations:,} conversations, {n:,} messages, {bulk.stat().st_size / 1e6:.1f} MB")
            inputs.append((f"{args.conversations:,} small conversations", bulk, n))
        counter = iter(range(1_000_000))
        if not args.no_sqlite:
            for label, path, n in inputs:
                bench(label, lambda: str(work / f"db{next(counter)}.db"), path, n)
        pg = None if args.no_pg else pg_database(args.pg)
        if pg is not None:
            create, drop_all = pg

            def create_with_timeout() -> str:
                url = create()
                name = url.rsplit("/", 1)[-1]
                with Store.open(url, migrate=False) as store, store.engine.connect() as conn:
                    conn = conn.execution_options(isolation_level="AUTOCOMMIT")
                    conn.exec_driver_sql(f"ALTER DATABASE \"{name}\" SET statement_timeout = '{SERVER_TIMEOUT}'")
                return url

            try:
                for label, path, n in inputs:
                    bench(label, create_with_timeout, path, n)
            finally:
                drop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
