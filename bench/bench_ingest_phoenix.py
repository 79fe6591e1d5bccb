"""Live OTLP ingest, side by side with Arize Phoenix: the same exports sent to both, until every conversation opens.

    .venv/bin/python bench/bench_ingest_phoenix.py [--conversations 100 1000] [--quick] [--concurrency 4]
        [--batch-spans 512] [--only traceloupe|phoenix] [--keep DIR]

From a fresh clone: ``bash scripts/setup.sh test && .venv/bin/python bench/bench_ingest_phoenix.py``; the first
run installs Phoenix into its venv itself (``bench/phoenix_server.py``), then runs unattended.

Figures, not assertions. Makes the OTLP/protobuf exports of agent conversations once (``bench/agent_spans.py``:
5 turns, each 3 model calls asking for tools and 3 tool spans, the history resent on every call, in OpenInference
conventions, which both tools read), then for each tool in turn, on a fresh SQLite store: starts its server
(``traceloupe serve`` with an ingest key; Phoenix from its own venv, ``bench/phoenix_server.py``), sends every
export from ``--concurrency`` senders, and polls its API as a user's page would read it until every conversation
can be opened whole. Traceloupe: ``/api/conversations`` lists all of them, each with the messages and records a
file import of the same spans gives (``traceloupe import --from otlp``). Phoenix: its GraphQL API counts every
span, and lists every session with its five traces.

Printed per tool: spans accepted per second (the send phase: first request to last answer), seconds from the first
request until every conversation opens, the server's CPU seconds meanwhile (what a loaded machine does not stretch),
peak RSS of the server and its workers (sampled from ``/proc``), the store's
size on disk; then the ratio of the times until queryable (the issue's target: Traceloupe at least 10x shorter).
Traceloupe's conversations are then compared with the file import's, text for text: nothing lost or doubled.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from bench import agent_spans, phoenix_server  # noqa: E402
from bench.processes import cpu_seconds, rss_kib  # noqa: E402
from core.store import Store  # noqa: E402

POLL_SECONDS = 0.25
PAGE = 500
PROTOBUF = "application/x-protobuf"


@dataclass(slots=True)
class Outcome:
    """One tool's figures for one run."""

    tool: str
    spans: int
    send_seconds: float
    queryable_seconds: float | None
    cpu_seconds: float
    """The server's CPU time (its workers' too) until every conversation opened: what the load cannot stretch."""
    peak_rss_mb: float
    store_mb: float
    note: str = ""


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PeakRss(threading.Thread):
    """Samples a process's resident memory (with its workers') until stopped; keeps the peak."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_kib = pid, 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            try:
                self.peak_kib = max(self.peak_kib, rss_kib(self.pid))
            except OSError:
                return
            self._done.wait(0.05)

    def stop(self) -> float:
        self._done.set()
        self.join()
        return self.peak_kib / 1024


def send_all(url: str, bodies: list[bytes], concurrency: int, headers: dict[str, str]) -> float:
    """Every body POSTed, ``concurrency`` at a time, each until answered 200 (after a 429/503's ``Retry-After``);
    the monotonic time of the last answer."""
    local = threading.local()

    def send(body: bytes) -> None:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(timeout=120, headers={"content-type": PROTOBUF, **headers})
        while True:
            answer = client.post(url, content=body)
            if answer.status_code == 200:
                return
            if answer.status_code not in (429, 503):
                raise RuntimeError(f"{url} answered {answer.status_code}: {answer.text[:200]}")
            time.sleep(float(answer.headers.get("retry-after", "1")))

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(send, bodies))
    return time.monotonic()


def measure(
    tool: str, pid: int, send: Callable[[], float], queryable: Callable[[], bool], timeout: float
) -> tuple[float, float | None, float, float]:
    """Send while polling ``queryable``: seconds to the last answer, seconds until queryable (None past
    ``timeout``), the server's CPU seconds meanwhile, peak RSS in MB."""
    sampler = PeakRss(pid)
    sampler.start()
    cpu_before = cpu_seconds(pid)
    start = time.monotonic()
    sent: list[float] = []
    sender = threading.Thread(target=lambda: sent.append(send()), daemon=True)
    sender.start()
    ready: float | None = None
    while time.monotonic() - start < timeout:
        if not sender.is_alive() and not sent:
            break  # the sender failed: its exception is printed by the thread
        if queryable():
            ready = time.monotonic() - start
            break
        time.sleep(POLL_SECONDS)
    cpu = cpu_seconds(pid) - cpu_before
    sender.join()
    peak = sampler.stop()
    if not sent:
        raise RuntimeError(f"{tool}: sending failed")
    return sent[0] - start, ready, cpu, peak


def _dir_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _traceloupe(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "web.cli", *args], cwd=ROOT, capture_output=True, text=True)


def reference(folder: Path, bodies: list[bytes]) -> Path:
    """A file import of the same spans: one protobuf request is the concatenation of the exports' bytes."""
    spans_file, db = folder / "spans.pb", folder / "reference.db"
    spans_file.write_bytes(b"".join(bodies))
    done = _traceloupe(["import", "--from", "otlp", str(spans_file), "--db", f"sqlite:///{db}", "--quiet"])
    if done.returncode != 0:
        raise RuntimeError(f"the file import failed: {done.stderr[-500:]}")
    return db


def _figures(db: Path) -> dict[str, tuple[int, int]]:
    with Store.open(str(db)) as store:
        return {s.conversation_id: (s.messages, s.records) for s in store.iter_conversations()}


def _all_listed(client: httpx.Client, expected: dict[str, tuple[int, int]]) -> bool:
    """Every conversation listed by the API with the file import's messages and records."""
    seen: dict[str, tuple[int, int]] = {}
    cursor: str | None = None
    while True:
        params: dict[str, str | int] = {"limit": PAGE, **({"cursor": cursor} if cursor else {})}
        page = client.get("/api/conversations", params=params).json()
        for item in page["conversations"]:
            seen[item["conversation_id"]] = (item["messages"], item["records"])
        cursor = page["next_cursor"]
        if cursor is None:
            return seen == expected


def run_traceloupe(
    folder: Path, bodies: list[bytes], expected: dict[str, tuple[int, int]], ns: argparse.Namespace
) -> Outcome:
    store_dir = folder / "traceloupe"
    store_dir.mkdir()
    db = store_dir / "live.db"
    with Store.open(str(db)) as store:
        key = store.api_keys.create("ingest", "bench")[1]
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with (folder / "traceloupe.log").open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "web.cli", "serve", "--db", str(db), "--port", str(port)],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ),
        )  # fmt: skip
    try:
        _wait_up(base + "/", server)
        with httpx.Client(base_url=base, timeout=60) as client:
            sent, ready, cpu, peak = measure(
                "traceloupe",
                server.pid,
                lambda: send_all(base + "/v1/traces", bodies, ns.concurrency, {"authorization": f"Bearer {key}"}),
                lambda: _all_listed(client, expected),
                ns.timeout,
            )
    finally:
        _stop(server)
    note = _compare(db, folder / "reference.db", expected) if ready is not None else "not all queryable"
    spans = len(expected) * agent_spans.TURNS * agent_spans.SPANS_PER_TURN
    return Outcome("traceloupe", spans, sent, ready, cpu, peak, _dir_mb(store_dir), note)


def _compare(live: Path, ref: Path, expected: dict[str, tuple[int, int]]) -> str:
    """Whether every conversation's export equals the file import's: nothing lost, nothing doubled."""
    differ = 0
    with Store.open(str(live)) as a, Store.open(str(ref)) as b:
        for conversation in expected:
            if list(a.export_texts(conversation)) != list(b.export_texts(conversation)):
                differ += 1
    return "same as the file import" if differ == 0 else f"{differ} conversation(s) differ from the file import"


def _wait_up(url: str, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the server exited with {process.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


def run_phoenix(folder: Path, bodies: list[bytes], conversations: int, ns: argparse.Namespace) -> Outcome:
    python = phoenix_server.venv_python(ns.phoenix_version)
    working = folder / "phoenix"
    working.mkdir()
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    server = phoenix_server.start(python, working, port, _free_port(), folder / "phoenix.log")
    spans = conversations * agent_spans.TURNS * agent_spans.SPANS_PER_TURN
    traces = conversations * agent_spans.TURNS
    counted: list[tuple[int, int]] = []

    def queryable(client: httpx.Client) -> bool:
        counts = phoenix_server.project_counts(client, agent_spans.PROJECT)
        if counts is None:
            return False
        counted[:] = [(counts[1], counts[2])]
        if counts[1:] != (traces, spans):
            return False
        sessions = phoenix_server.session_traces(client, counts[0])
        return len(sessions) == conversations and set(sessions.values()) == {agent_spans.TURNS}

    try:
        phoenix_server.wait_until_up(base, server)
        with httpx.Client(base_url=base, timeout=60) as client:
            sent, ready, cpu, peak = measure(
                "phoenix",
                server.pid,
                lambda: send_all(base + "/v1/traces", bodies, ns.concurrency, {}),
                lambda: queryable(client),
                ns.timeout,
            )
    finally:
        _stop(server)
    note = f"traces, spans counted: {counted[0] if counted else 'none'}"
    return Outcome("phoenix", spans, sent, ready, cpu, peak, _dir_mb(working), note)


def _row(outcome: Outcome) -> str:
    ready = f"{outcome.queryable_seconds:8.2f}" if outcome.queryable_seconds is not None else "   never"
    rate = outcome.spans / outcome.send_seconds
    return (
        f"{outcome.tool:11} {rate:10.0f} {outcome.send_seconds:8.2f} {ready} {outcome.cpu_seconds:7.1f} "
        f"{outcome.peak_rss_mb:9.0f} {outcome.store_mb:9.1f}  {outcome.note}"
    )


def run(conversations: int, ns: argparse.Namespace, folder: Path) -> None:
    bodies = agent_spans.otlp_batches(conversations, ns.batch_spans)
    spans = conversations * agent_spans.TURNS * agent_spans.SPANS_PER_TURN
    megabytes = sum(map(len, bodies)) / 1e6
    print(
        f"\n{conversations} conversations: {spans} spans in {len(bodies)} exports ({megabytes:.1f} MB protobuf), "
        f"{ns.concurrency} senders; arize-phoenix=={ns.phoenix_version}",
        flush=True,
    )
    expected = _figures(reference(folder, bodies))
    if len(expected) != conversations:
        raise RuntimeError(f"the file import made {len(expected)} conversations, not {conversations}")
    print(
        f"{'tool':11} {'spans/s':>10} {'send s':>8} {'ready s':>8} {'cpu s':>7} {'peak MB':>9} {'store MB':>9}",
        flush=True,
    )
    outcomes = []
    if ns.only in (None, "traceloupe"):
        outcomes.append(run_traceloupe(folder, bodies, expected, ns))
        print(_row(outcomes[-1]), flush=True)
    if ns.only in (None, "phoenix"):
        outcomes.append(run_phoenix(folder, bodies, conversations, ns))
        print(_row(outcomes[-1]), flush=True)
    times = {o.tool: o.queryable_seconds for o in outcomes}
    if times.get("traceloupe") and times.get("phoenix"):
        print(f"time until queryable, phoenix / traceloupe: {times['phoenix'] / times['traceloupe']:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--quick", action="store_true", help="20 conversations only")
    parser.add_argument("--concurrency", type=int, default=4, help="senders at once, for both tools")
    parser.add_argument("--batch-spans", type=int, default=agent_spans.DEFAULT_BATCH_SPANS)
    parser.add_argument("--only", choices=["traceloupe", "phoenix"])
    parser.add_argument("--timeout", type=float, default=1800, help="seconds to wait for queryable, per tool")
    parser.add_argument("--phoenix-version", default=phoenix_server.PHOENIX_VERSION)
    parser.add_argument("--keep", type=Path, help="keep the stores and logs here")
    ns = parser.parse_args()
    sizes = [20] if ns.quick else ns.conversations
    for conversations in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            if ns.keep:
                folder = ns.keep / f"{conversations}"
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir(parents=True)
            run(conversations, ns, folder)


if __name__ == "__main__":
    main()
