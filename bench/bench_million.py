"""A million conversations: the list, its pages and its searches at 100,000 and 1,000,000, on both backends.

    .venv/bin/python bench/bench_million.py [--sizes 100000,1000000] [--no-sqlite] [--no-pg]
        [--dir /tmp/bench_million] [--pg URL] [--pg-prefix bench_million] [--load-only] [--drop] [--repeat 5]

Figures, not assertions. Each store holds N small conversations (a user question and an answer), loaded
as a user would: one generated JSONL file stored by ``traceloupe import`` in a child process (the streamed
import, one transaction), whose rate is printed (messages per second, wall-clock and per second of the
import's own CPU, with the load average: the machine may be shared). A store is loaded once and kept (SQLite:
``<dir>/store-<N>.db``; PostgreSQL: the database ``<prefix>_<N>``) so reruns only measure; ``--drop``
removes them at the end.

Measured on one store connection (a pool of one) per store, after 50 searches on it, as a server's pooled
connection would be: list page 1 and page 1,000 (50 per page, keyset cursor), and a search (list page 1 plus the
capped "save these N" count the list page shows) for a rare word (one conversation), a common word (every
conversation), a 2-character CJK word (one conversation in 100) and a 2-character ASCII word (one in 100). The stores
of every size are open at once and timed in rounds, each round timing every size once (a burst of load hits a round,
not a size); each figure is the median of ``--repeat`` rounds.
The last column is the ratio of the largest size to the smallest: the target is at most 2.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from core.store import ConversationQuery, Store  # noqa: E402
from core.store.engine import read_transaction  # noqa: E402
from core.store.settings import EngineSettings  # noqa: E402
from core.store.tables import CONVERSATIONS  # noqa: E402

BASE_TS = 1_700_000_000_000
COUNT_CAP = 200
"""The list page's "save these N" cap (``web.list_query.COUNT_CAP``)."""
WARM_SEARCHES = 50
SETTINGS = EngineSettings(pool_size=1, statement_timeout_ms=600_000)
"""One pooled connection: every query of the run goes through it, as a long-lived server's would."""


def texts(i: int) -> tuple[str, str]:
    """Conversation ``i``'s question and answer: a common word in each, a rare one, CJK and short words in some."""
    extra = ""
    if i % 100 == 7:
        extra += " 今天天气很好"
    if i % 100 == 51:
        extra += " the qj code"
    if i % 10 == 3:
        extra += " 你好世界"
    question = f"weather question {i} about city{i % 1000} ticket zx{i:07d}{extra}"
    answer = f"answer {i}: it is sunny in city{i % 1000}"
    return question, answer


def _message(conversation_id: str, msg_id: str, role: str, content: str, ts: int) -> dict[str, Any]:
    body = {"role": role, "msg_type": "text", "content": content, "create_ts": ts, "msg_id": msg_id}
    if role == "user":
        body["conversation_id"] = conversation_id
    return body


def write_jsonl(path: Path, n: int) -> int:
    """``n`` conversations of two messages each, as one JSONL file; the messages written.

    The list's order (last activity) is a permutation of the conversations' order in the file, so a page
    of the list is not a run of rows stored together."""
    with path.open("wb") as out:
        for i in range(n):
            question, answer = texts(i)
            ts = BASE_TS + ((i * 7919) % n) * 1000
            cid = f"conv-{i:07d}"
            for k, (role, content) in enumerate((("user", question), ("assistant", answer))):
                message = _message(cid, f"m{i}-{k}", role, content, ts + k)
                message["conversation_id"] = cid
                out.write(orjson.dumps(message) + b"\n")
    return 2 * n


def load(url: str, n: int, work: Path) -> None:
    """Write ``n`` conversations as JSONL and store them with ``traceloupe import`` in a child process (one
    file, one transaction); prints the load rate, in wall-clock and in the child's CPU time."""
    path = work / f"conversations-{n}-{os.getpid()}.jsonl"  # stores of both backends may load side by side
    messages = write_jsonl(path, n)
    mb = path.stat().st_size / 1e6
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    command = [sys.executable, "-m", "web.cli", "import", str(path), "--db", url, "-q"]
    subprocess.run(command, check=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    path.unlink()
    print(
        f"  loaded {messages:,} messages ({mb:.0f} MB) in {seconds:.0f} s: {messages / seconds:,.0f} msg/s "
        f"({messages / cpu:,.0f} msg/s of the import's own CPU, {cpu:.0f} s); "
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after",
        flush=True,
    )


def stored(store: Store) -> int:
    with read_transaction(store.engine) as conn:
        return int(conn.execute(select(func.count()).select_from(CONVERSATIONS)).scalar_one())


def list_page(store: Store, q: ConversationQuery) -> None:
    """What the list page asks the store: the page, and the capped count when the list is narrowed."""
    page = store.list_conversations(q)
    if q.search and page.next_cursor:
        store.count_conversations(q, COUNT_CAP)


def searches(n: int) -> dict[str, str]:
    return {"rare": f"zx{n // 2 + 1:07d}", "common": "weather", "CJK 2-char": "天气", "ASCII 2-char": "qj"}


def timed_calls(store: Store, n: int) -> dict[str, Callable[[], None]]:
    """What is timed on one store, by name, once its pool's one connection has run 50 searches."""
    needles = searches(n)
    warm = [needles["rare"], needles["common"]]  # the short ones are scans past the walk: too slow to repeat
    for k in range(WARM_SEARCHES):
        list_page(store, ConversationQuery(search=warm[k % len(warm)]))
    cursor = None
    for _ in range(999):
        cursor = store.list_conversations(ConversationQuery(cursor=cursor)).next_cursor
    calls: dict[str, Callable[[], None]] = {
        "list page 1": partial(list_page, store, ConversationQuery()),
        "list page 1,000": partial(list_page, store, ConversationQuery(cursor=cursor)),
    }
    for name, needle in needles.items():
        calls[f"search {name}"] = partial(list_page, store, ConversationQuery(search=needle))
    return calls


def medians_in_rounds(calls: dict[int, dict[str, Callable[[], None]]], repeat: int) -> dict[int, dict[str, float]]:
    """The median ms of each call of each size over ``repeat`` rounds, each round timing every size once: a burst of
    load on the shared machine hits a round, not a size."""
    samples: dict[int, dict[str, list[float]]] = {n: {} for n in calls}
    for name in next(iter(calls.values())):
        for _ in range(repeat):
            for n, by_name in calls.items():
                start = time.perf_counter()
                by_name[name]()
                samples[n].setdefault(name, []).append((time.perf_counter() - start) * 1000)
    return {n: {name: statistics.median(ms) for name, ms in by_name.items()} for n, by_name in samples.items()}


def stores(args: argparse.Namespace) -> Iterator[tuple[str, int, str]]:
    """(backend, size, URL) of every store measured."""
    sizes = [int(s) for s in args.sizes.split(",")]
    if not args.no_sqlite:
        args.dir.mkdir(parents=True, exist_ok=True)
        for n in sizes:
            yield "sqlite", n, str(args.dir / f"store-{n}.db")
    if not args.no_pg:
        for n in sizes:
            yield "postgresql", n, pg_url(args.pg, f"{args.pg_prefix}_{n}", create=True)


def pg_url(base: str, name: str, *, create: bool) -> str:
    import psycopg

    from core.store.engine import resolve_url

    url = resolve_url(base)
    with psycopg.connect(host=url.host, port=url.port or 5432, user=url.username, dbname=url.database) as admin:
        admin.autocommit = True
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if create and not exists:
            admin.execute(f'CREATE DATABASE "{name}"')  # name: a constant of this script
        if not create and exists:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    return url.set(database=name).render_as_string(hide_password=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/bench_million"))
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--pg-prefix", default="bench_million", help="the PostgreSQL databases' names: PREFIX_N")
    parser.add_argument("--load-only", action="store_true", help="load the stores, measure nothing")
    parser.add_argument("--drop", action="store_true", help="remove the stores at the end")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    urls: dict[str, dict[int, str]] = {}
    for backend, n, url in stores(args):
        with Store.open(url, settings=SETTINGS) as store:
            have = stored(store)
        if have != n:
            if have:
                raise SystemExit(f"{url} holds {have:,} conversations, not {n:,}: remove it first")
            print(f"[{backend}] importing {n:,} conversations", flush=True)
            args.dir.mkdir(parents=True, exist_ok=True)
            load(url, n, args.dir)
        urls.setdefault(backend, {})[n] = url
    results: dict[str, dict[int, dict[str, float]]] = {}
    for backend, url_of in urls.items():
        if args.load_only:
            break
        with ExitStack() as opened:
            calls = {
                n: timed_calls(opened.enter_context(Store.open(url, settings=SETTINGS)), n) for n, url in url_of.items()
            }
            results[backend] = medians_in_rounds(calls, args.repeat)
    for backend, by_size in results.items():
        sizes = sorted(by_size)
        print(f"\n[{backend}] ms, median of {args.repeat} rounds, after {WARM_SEARCHES} searches on each connection")
        print(f"{'':<32}" + "".join(f"{n:>12,}" for n in sizes) + "   ratio")
        for name in by_size[sizes[0]]:
            cells = [by_size[n][name] for n in sizes]
            ratio = cells[-1] / cells[0] if cells[0] else float("nan")
            print(f"{name:<32}" + "".join(f"{c:>12.2f}" for c in cells) + f"{ratio:>8.2f}")
    if args.drop:
        for n in (int(s) for s in args.sizes.split(",")):
            (args.dir / f"store-{n}.db").unlink(missing_ok=True)
            if not args.no_pg:
                pg_url(args.pg, f"{args.pg_prefix}_{n}", create=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
