"""Load test: N concurrent clients drive a real ``traceloupe serve`` from this process, over loopback.

    .venv/bin/python bench/load.py [--clients 50] [--seconds 60] [--conversations 10000]
                                   [--large 3] [--records 10000] [--db PATH|URL] [--workers 1[,2]] [--rounds 1]

The store (``--db``, a SQLite file or a PostgreSQL URL; a temporary SQLite file by default) is
filled with ``--conversations`` everyday conversations and ``--large`` traces of ``--records``
records (``bench/load_data.py``; a store that holds them already is reused). The server runs as a
child process (``--workers`` processes behind one port; with several counts, ``--workers 1,2
--rounds 3`` runs them in turn and prints each count's median throughput as a ratio of the first's).
Each client loops over a weighted mix of
list pages, searches, timelines, payload pages, diffs, run lists and the JSON API until the time is
up, one request at a time. Window routes fetch the later windows of the long traces' payload and
diff pages, as a reader scrolling them does; their URLs are read from those pages, which the
warm-up requests for every long trace in every server process (so the timed run starts with
their builds cached), along with one request per route. Each client keeps one connection
(``bench/lean_http.py``: a driver that costs the shared cores little). Reported: throughput,
p50/p95/p99/max latency per route, non-200 answers and transport errors, the CPU time per request
of the server, of a local PostgreSQL and of the driver (comparable between runs on a busy machine,
unlike latencies), the load average, and the server's resident memory (all its processes) after
the warm-up and at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.lean_http import HTTPFailure, LeanConnection  # noqa: E402
from bench.load_data import WORDS, fill, long_id, ordinary_id  # noqa: E402
from bench.processes import cpu_seconds, local_postgres_cpu_seconds, rss_kib  # noqa: E402
from core.store import Store  # noqa: E402

Pick = Callable[[random.Random], str]


def large_pages(large: int) -> dict[str, list[str]]:
    """The long traces' payload and diff pages, by route: the pages whose later windows the mix asks for."""
    return {
        "payload": [f"/conversations/{long_id(n)}/payload/anthropic" for n in range(large)],
        "diff": [f"/conversations/{long_id(n)}/diff?left=openai&right=anthropic" for n in range(large)],
    }


def window_urls(html: str) -> list[str]:
    """The later windows' URLs of a payload or diff page (each placeholder's ``hx-get``)."""
    return [unescape(u) for u in re.findall(r'hx-get="([^"]*/window\?[^"]*)"', html)]


def routes(conversations: int, large: int, windows: dict[str, list[str]] | None = None) -> dict[str, tuple[int, Pick]]:
    """Route name -> (weight, a function that picks one URL of it); ``windows``: window URLs by page route."""

    def small(rng: random.Random) -> str:
        return f"/conversations/{ordinary_id(rng.randrange(conversations))}"

    def big(rng: random.Random) -> str:
        return f"/conversations/{long_id(rng.randrange(large))}"

    mix: dict[str, tuple[int, Pick]] = {
        "list": (12, lambda rng: rng.choice(["/", "/?sort=oldest", "/?kind=tool", "/?has_runs=0"])),
        "search": (14, lambda rng: f"/?q={rng.choice(WORDS)}+{rng.choice(WORDS)}"),
        "timeline": (30, small),
        "payload": (10, lambda rng: f"{small(rng)}/payload/{rng.choice(['openai', 'anthropic', 'gemini'])}"),
        "diff": (10, lambda rng: f"{small(rng)}/diff?left=openai&right=anthropic"),
        "replays": (5, lambda rng: f"{small(rng)}/replays"),
        "api": (8, lambda rng: f"/api{small(rng)}"),
    }
    if large:
        mix["timeline_large"] = (6, big)
        mix["payload_large"] = (1, lambda rng: f"{big(rng)}/payload/anthropic")
        mix["diff_large"] = (1, lambda rng: f"{big(rng)}/diff?left=openai&right=anthropic")
        for page, urls in (windows or {}).items():
            if urls:
                mix[f"{page}_window_large"] = (2, lambda rng, urls=urls: rng.choice(urls))
    return mix


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=dict)
    statuses: dict[str, Counter[int]] = field(default_factory=dict)
    errors: dict[str, Counter[str]] = field(default_factory=dict)
    seconds: float = 0.0
    """From the first request to the last answer."""

    def add(self, route: str, ms: float, status: int | None, error: str | None = None) -> None:
        self.latencies.setdefault(route, []).append(ms)
        self.statuses.setdefault(route, Counter())
        self.errors.setdefault(route, Counter())
        if status is not None:
            self.statuses[route][status] += 1
        if error is not None:
            self.errors[route][error] += 1


async def client_loop(
    connection: LeanConnection, mix: dict[str, tuple[int, Pick]], deadline: float, seed: int, stats: Stats
) -> None:
    rng = random.Random(seed)
    names = list(mix)
    weights = [mix[n][0] for n in names]
    try:
        while time.monotonic() < deadline:
            route = rng.choices(names, weights)[0]
            url = mix[route][1](rng)
            start = time.perf_counter()
            try:
                status, _ = await connection.get(url)
                stats.add(route, (time.perf_counter() - start) * 1000, status)
            except HTTPFailure as exc:
                stats.add(route, (time.perf_counter() - start) * 1000, None, str(exc))
    finally:
        await connection.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(db: str, workers: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "TRACELOUPE_DATABASE_URL"}
    command = [sys.executable, "-m", "web.cli", "serve", "--db", db, "--port", str(port), "--workers", str(workers)]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server stopped: see {log}")
        try:
            if httpx.get(base + "/", timeout=5).status_code == 200:
                return process, base
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    process.terminate()
    raise SystemExit(f"the server did not start in 120 s: see {log}")


async def drive(base: str, clients: int, seconds: float, mix: dict[str, tuple[int, Pick]], timeout: float) -> Stats:
    """Every client's requests until ``seconds`` have passed (requests in flight then are waited for)."""
    stats = Stats()
    started = time.monotonic()
    deadline = started + seconds
    loops = (client_loop(LeanConnection(base, timeout), mix, deadline, seed, stats) for seed in range(clients))
    await asyncio.gather(*loops)
    stats.seconds = time.monotonic() - started
    return stats


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def report(stats: Stats, rss: tuple[int, int, int], cpu: tuple[float, float, float], load: tuple[float, float]) -> None:
    """``cpu``: seconds of the server, of this machine's PostgreSQL and of this driver, during the run."""
    seconds = stats.seconds
    total = sum(len(v) for v in stats.latencies.values())
    print(
        f"{'route':<22} {'requests':>8} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}  answers"
    )
    for route in sorted(stats.latencies):
        ms = stats.latencies[route]
        answers = ", ".join(f"{k}: {v}" for k, v in sorted(stats.statuses[route].items()))
        errors = ", ".join(f"{k}: {v}" for k, v in stats.errors[route].items())
        print(
            f"{route:<22} {len(ms):>8} {len(ms) / seconds:>7.1f} {statistics.median(ms):>8.0f} "
            f"{percentile(ms, 95):>8.0f} {percentile(ms, 99):>8.0f} {max(ms):>8.0f}  {answers}"
            + (f"; errors {errors}" if errors else "")
        )
    statuses = sum((c for c in stats.statuses.values()), Counter[int]())
    errors = sum(sum(c.values()) for c in stats.errors.values())
    server_errors = sum(n for status, n in statuses.items() if status >= 500)
    other = sum(n for status, n in statuses.items() if status != 200 and status < 500)
    print(
        f"total: {total} requests in {seconds:.0f} s = {total / seconds:.1f} req/s; "
        f"5xx: {server_errors}; other non-200: {other}; transport errors: {errors}"
    )
    server, database, driver = cpu
    per = 1000 / max(total, 1)
    print(
        f"server CPU: {server:.1f} s in the run = {server * per:.0f} ms per request; "
        f"load average (1 min) {load[0]:.1f} at the start, {load[1]:.1f} at the end, {os.cpu_count()} CPUs"
    )
    print(f"other CPU per request: local PostgreSQL {database * per:.1f} ms, this driver {driver * per:.1f} ms")
    start, end, peak = rss
    growth = (end - start) / 1024
    print(f"server RSS: {start / 1024:.0f} MiB at the start (after the warm-up), "
          f"{end / 1024:.0f} MiB at the end (growth {growth:+.0f} MiB), peak {peak / 1024:.0f} MiB")  # fmt: skip


async def sample_rss(pid: int, peak: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], rss_kib(pid))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1)


async def run(base: str, pid: int, ns: argparse.Namespace, mix: dict[str, tuple[int, Pick]]) -> tuple[Stats, int]:
    peak = [0]
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_rss(pid, peak, stop))
    stats = await drive(base, ns.clients, ns.seconds, mix, ns.timeout)
    stop.set()
    await sampler
    return stats, peak[0]


WARM_ROUNDS_PER_WORKER = 5
"""Warm-up rounds, each on a new connection, per server process: connections land on a process at random,
so every process has built the long traces before the run (all of them miss one with odds of 2 ** -9)."""


def warm_up(base: str, workers: int, ns: argparse.Namespace, skip: list[str]) -> dict[str, tuple[int, Pick]]:
    """Build every long trace's pages and prime every route, in every server process; returns the mix."""
    windows: dict[str, list[str]] = {}
    mix: dict[str, tuple[int, Pick]] = {}
    rounds = 1 if workers == 1 else WARM_ROUNDS_PER_WORKER * workers
    for n in range(rounds):
        with httpx.Client(base_url=base, timeout=120) as warm:
            for page, urls in large_pages(ns.large).items():  # every long trace built once, its windows listed
                if f"{page}_large" in skip:
                    continue
                for url in urls:
                    response = warm.get(url)
                    if n == 0:
                        print(f"warm-up {url}: {response.status_code}", flush=True)
                        windows.setdefault(page, []).extend(window_urls(response.text))
            mix = {k: v for k, v in routes(ns.conversations, ns.large, windows).items() if k not in skip}
            for route, (_, pick) in mix.items():  # templates compiled, caches primed: RSS from here on
                status = warm.get(pick(random.Random(n))).status_code
                if n == 0:
                    print(f"warm-up {route}: {status}", flush=True)
    return mix


def measure(db: str, workers: int, ns: argparse.Namespace, folder: Path) -> float:
    """One timed run against ``workers`` server processes, reported; returns its requests per second."""
    skip = ns.skip.split(",")
    log = folder / f"server-{workers}-{time.monotonic_ns()}.log"
    process, base = start_server(db, workers, log)
    try:
        mix = warm_up(base, workers, ns, skip)
        start_rss = rss_kib(process.pid)
        start_cpu, start_load = cpu_seconds(process.pid), os.getloadavg()[0]
        start_others = (local_postgres_cpu_seconds(), time.process_time())
        stats, peak = asyncio.run(run(base, process.pid, ns, mix))
        cpu, end_load = cpu_seconds(process.pid) - start_cpu, os.getloadavg()[0]
        others = (local_postgres_cpu_seconds() - start_others[0], time.process_time() - start_others[1])
        end_rss = rss_kib(process.pid)
    finally:
        process.terminate()
        process.wait(60)
    print(f"{ns.clients} clients, {ns.seconds:.0f} s, {workers} server process(es), server log {log}")
    report(stats, (start_rss, end_rss, max(peak, end_rss)), (cpu, *others), (start_load, end_load))
    return sum(len(v) for v in stats.latencies.values()) / stats.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=3, help="how many long traces (default: %(default)s)")
    parser.add_argument("--records", type=int, default=10_000, help="records per long trace (default: %(default)s)")
    parser.add_argument("--db", default=None, help="a SQLite file or a postgresql:// URL (default: a temporary file)")
    parser.add_argument(
        "--workers", default="1", metavar="N[,N...]",
        help="server processes; several counts are run in turn and their throughputs compared (default: 1)",
    )  # fmt: skip
    parser.add_argument("--rounds", type=int, default=1, help="runs of each worker count, alternating (default: 1)")
    parser.add_argument("--timeout", type=float, default=120, help="a client gives up after S seconds (an error)")
    parser.add_argument("--skip", default="", metavar="ROUTE,...", help="routes left out of the mix")
    ns = parser.parse_args()
    counts = [int(n) for n in ns.workers.split(",")]
    folder = Path(tempfile.mkdtemp(prefix="traceloupe-load-"))
    db = ns.db or str(folder / "load.db")
    started = time.monotonic()
    with Store.open(db) as store:
        filled = fill(store, conversations=ns.conversations, large=ns.large, records=ns.records)
    print(f"store: {db} ({'filled' if filled else 'reused'} in {time.monotonic() - started:.0f} s)", flush=True)
    throughput: dict[int, list[float]] = {n: [] for n in counts}
    for _ in range(ns.rounds):
        for workers in counts:
            throughput[workers].append(measure(db, workers, ns, folder))
    if len(counts) > 1 or ns.rounds > 1:
        base = statistics.median(throughput[counts[0]])
        for workers, runs in throughput.items():
            each = ", ".join(f"{r:.1f}" for r in runs)
            ratio = statistics.median(runs) / base
            print(f"{workers} process(es): {each} req/s; median {statistics.median(runs):.1f} = {ratio:.2f}x")


if __name__ == "__main__":
    main()
