"""Store benchmark: import throughput against a bare executemany floor, and keyset list pages.

    .venv/bin/python bench/bench_store.py [--messages 100000] [--conversations 100000] [--repeat 3] [--pg URL]
        [--no-pg] [--no-sqlite] [--no-list]

Figures, not assertions. For each backend (SQLite in a temp file; PostgreSQL in a
fresh database on the server, skipped when unreachable):

1. ``traceloupe import`` of N messages (read + validate + derive + write, one
   transaction): messages per second.
2. The floor: a bare DB-API ``executemany`` of exactly the rows the import stored
   (messages, their outlines and search rows: on SQLite the FTS5 and grams rows, on PostgreSQL the
   texts and search chunks; JSON already serialised, conversations already present) into a fresh database
   with the same schema (indexes, FTS trigger): messages per second. The ratio is
   import rate / floor rate; the target is at least 0.5.
3. The list over M conversations: page 1 and page 1,000 (50 per page, keyset cursor)
   of the default sort, median of repeated fetches; keyset pagination should keep
   them within 2x of each other, where OFFSET would grow with the page number.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402
from sqlalchemy import select, text  # noqa: E402

from core.store import SORTS, ConversationQuery, Store  # noqa: E402
from core.store.engine import read_transaction, write_transaction  # noqa: E402
from core.store.grams import GRAMS_TABLE, pieces_tokens  # noqa: E402
from core.store.jsonio import dumps_text  # noqa: E402
from core.store.pg_search import SEARCH_CHUNKS  # noqa: E402
from core.store.tables import (  # noqa: E402
    CONVERSATIONS,
    MESSAGE_OUTLINES,
    MESSAGE_SEARCH_PIECES,
    MESSAGE_TEXTS,
    MESSAGES,
)
from tests.store.store_factory import dataset  # noqa: E402

MESSAGE_COLUMNS = [c.name for c in MESSAGES.columns]
JSON_COLUMNS = {"body"}


def write_input(path: Path, messages: int) -> int:
    """A JSONL file of about ``messages`` messages (5 turns x 2 per conversation, 3 trace records each)."""
    per_conv = 10
    data = dataset(seed=7, conversations=max(1, messages // per_conv), turns=5, records=3)
    path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in data))
    return len(data)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


@dataclass(frozen=True, slots=True)
class StoredRows:
    """Every row an import stored, as a floor writes them again: messages, conversations, outlines, a long text's
    search pieces, and the search rows (PostgreSQL: texts and chunks; SQLite: each message's grams, made before
    the clock starts)."""

    messages: list[dict[str, Any]]
    conversations: list[tuple[int, str]]
    outlines: list[tuple[int, str]]
    texts: list[tuple[int, bytes]]
    chunks: list[tuple[int, int, int, str, list[str]]]
    pieces: list[tuple[int, int, int, str]]


def read_stored(store: Store) -> StoredRows:
    """What an import stored in ``store``."""
    o, t, s, p = MESSAGE_OUTLINES.c, MESSAGE_TEXTS.c, SEARCH_CHUNKS.c, MESSAGE_SEARCH_PIECES.c
    with read_transaction(store.engine) as conn:
        messages = [dict(r._mapping) for r in conn.execute(select(*[MESSAGES.c[c] for c in MESSAGE_COLUMNS]))]
        conversations = [
            (pk, cid) for pk, cid in conn.execute(select(CONVERSATIONS.c.id, CONVERSATIONS.c.conversation_id))
        ]
        outlines = [(pk, outline) for pk, outline in conn.execute(select(o.message_pk, o.outline))]
        texts = [(pk, text) for pk, text in conn.execute(select(t.message_pk, t.text))]
        pieces = [(pid, pk, seq, t) for pid, pk, seq, t in conn.execute(select(p.id, p.message_pk, p.seq, p.text))]
        chunks: list[tuple[int, int, int, str, list[str]]] = []
        if store.backend == "postgresql":
            query = select(s.message_pk, s.seq, s.conversation_pk, s.folded, s.grams)
            chunks = [(pk, seq, cpk, folded, grams) for pk, seq, cpk, folded, grams in conn.execute(query)]
    return StoredRows(messages, conversations, outlines, texts, chunks, pieces)


def floor_rate(url: str, stored: StoredRows) -> float:
    """Messages per second of a bare executemany (COPY for PostgreSQL's search chunks) of the rows an import
    stored, search rows included, into a fresh store."""
    rows = stored.messages
    with Store.open(url) as store:
        with write_transaction(store.engine) as conn:
            conn.execute(
                CONVERSATIONS.insert(), [{"id": pk, "conversation_id": cid} for pk, cid in stored.conversations]
            )
        backend = store.backend
        values = [tuple(dumps_text(r[c]) if c in JSON_COLUMNS else r[c] for c in MESSAGE_COLUMNS) for r in rows]
        more: dict[int, list[str]] = {}
        for _, pk, _, piece in sorted(stored.pieces, key=lambda row: row[2]):
            more.setdefault(pk, []).append(piece)
        searched = ((r["id"], [r["search_text"], *more.get(r["id"], ())]) for r in rows)
        grams = [(pk, pieces_tokens(pieces)) for pk, pieces in searched] if backend == "sqlite" else []
        raw = store.engine.raw_connection()
        try:
            cur = raw.cursor()
            cols = ", ".join(MESSAGE_COLUMNS)
            if backend == "sqlite":
                marks = ", ".join("?" for _ in MESSAGE_COLUMNS)
                sql = f"INSERT INTO messages ({cols}) VALUES ({marks})"
                start = time.perf_counter()
                cur.execute("BEGIN IMMEDIATE")
            else:
                cur.execute("SET statement_timeout = 0")  # as the import does: the engine's is for requests
                marks = ", ".join("%s::jsonb" if c in JSON_COLUMNS else "%s" for c in MESSAGE_COLUMNS)
                sql = f"INSERT INTO messages ({cols}) VALUES ({marks})"
                start = time.perf_counter()
            cur.executemany(sql, values)
            if stored.pieces:  # a long text's pieces after its first (revision 0028)
                sql = "INSERT INTO message_search_pieces (id, message_pk, seq, text) VALUES (%s, %s, %s, %s)"
                cur.executemany(sql if backend == "postgresql" else sql.replace("%s", "?"), stored.pieces)
            if backend == "sqlite":  # the search indexes, which no trigger fills (revisions 0020, 0021, 0028)
                cur.execute("INSERT INTO message_fts(rowid, search_text) SELECT id, search_text FROM messages")
                cur.execute("INSERT INTO search_piece_fts(rowid, text) SELECT id, text FROM message_search_pieces")
                cur.executemany(f"INSERT INTO {GRAMS_TABLE}(rowid, grams) VALUES (?, ?)", grams)
            # An import stores each message's outline too (core.store.outline), and on PostgreSQL its text.
            if stored.outlines:
                sql = "INSERT INTO message_outlines (message_pk, outline) VALUES (%s, %s)"
                cur.executemany(sql if backend == "postgresql" else sql.replace("%s", "?"), stored.outlines)
            if stored.texts:  # PostgreSQL only
                cur.executemany("INSERT INTO message_texts (message_pk, text) VALUES (%s, %s)", stored.texts)
            if stored.chunks:  # PostgreSQL only
                columns = "message_pk, seq, conversation_pk, folded, grams"
                with cur.copy(f"COPY search_chunks ({columns}) FROM STDIN") as copy:
                    for chunk in stored.chunks:
                        copy.write_row(chunk)
            raw.commit() if backend == "postgresql" else cur.execute("COMMIT")
            elapsed = time.perf_counter() - start
        finally:
            raw.close()
    return len(rows) / elapsed


def _import_once(url: str, path: Path, n: int) -> tuple[float, str, StoredRows]:
    """One import into a fresh store: its seconds, backend, and the rows it stored."""
    with Store.open(url) as store:
        elapsed, summary = timed(lambda: store.import_path(path))
        assert summary.imported == n, summary
        return elapsed, store.backend, read_stored(store)


def bench_import(new_url: Callable[[], str], path: Path, n: int, repeat: int) -> None:
    """Import and floor, alternated ``repeat`` times into fresh databases; the best of each is reported.

    The machine is shared: the best run is the one least disturbed by other load, for both sides.
    """
    imports: list[float] = []
    floors: list[float] = []
    backend = ""
    for _ in range(repeat):
        elapsed, backend, stored = _import_once(new_url(), path, n)
        imports.append(elapsed)
        floors.append(floor_rate(new_url(), stored))
    elapsed = min(imports)
    rate = n / elapsed
    floor = max(floors)
    runs = ", ".join(f"{s:.1f}" for s in imports)
    print(
        f"[{backend}] import {n:,} messages: {elapsed:.2f} s (read, validate, derive and write, streamed), "
        f"{rate:,.0f} msg/s  [runs: {runs} s]"
    )
    floor_runs = ", ".join(f"{n / f:.1f}" for f in floors)
    print(
        f"[{backend}] floor (bare executemany of the same rows): {floor:,.0f} msg/s ({n / floor:.2f} s)  "
        f"[runs: {floor_runs} s]"
    )
    print(f"[{backend}] ratio import/floor: {rate / floor:.2f} (target >= 0.5)")


def bench_list(url: str, conversations: int) -> None:
    with Store.open(url) as store:
        base = 1_700_000_000_000
        with write_transaction(store.engine, label="the benchmark's 100,000 conversations") as conn:
            conn.execute(
                CONVERSATIONS.insert(),
                [
                    {
                        "conversation_id": f"c{i:07d}",
                        "title": f"title {i}",
                        "messages": 2,
                        "turns": 1,
                        "first_ts": base + i,
                        "last_activity": base + (i * 7919) % conversations,
                    }
                    for i in range(conversations)
                ],
            )
        if store.backend == "postgresql":
            with store.engine.begin() as conn:
                conn.execute(text("ANALYZE conversations"))
        for sort in ("recent", "oldest"):
            cursor = None
            page_cursor: dict[int, str | None] = {1: None}
            for page in range(1, 1000):
                result = store.list_conversations(ConversationQuery(sort=sort, limit=50, cursor=cursor))
                cursor = result.next_cursor
                page_cursor[page + 1] = cursor
            times = {}
            for page in (1, 1000):
                q = ConversationQuery(sort=sort, limit=50, cursor=page_cursor[page])
                samples = [timed(lambda q=q: store.list_conversations(q))[0] for _ in range(30)]
                times[page] = statistics.median(samples)
            offset_s = statistics.median(
                timed(lambda sort=sort: _offset_page(store, sort, 999 * 50))[0] for _ in range(10)
            )
            print(
                f"[{store.backend}] list {conversations:,} conversations, sort={sort}: "
                f"page 1 {times[1] * 1000:.2f} ms, page 1,000 {times[1000] * 1000:.2f} ms "
                f"(ratio {times[1000] / times[1]:.2f}, target <= 2; OFFSET would take {offset_s * 1000:.2f} ms)"
            )


def _offset_page(store: Store, sort: str, offset: int) -> list[Any]:
    """Page 1,000 the way OFFSET pagination would fetch it, for comparison only."""
    column = SORTS[sort].column
    order = [column.desc(), CONVERSATIONS.c.id.desc()] if SORTS[sort].descending else [column, CONVERSATIONS.c.id]
    with read_transaction(store.engine) as conn:
        return conn.execute(select(CONVERSATIONS).order_by(*order).offset(offset).limit(50)).all()


def pg_database(base: str) -> tuple[Callable[[], str], Callable[[], None]] | None:
    import psycopg

    from core.store.engine import resolve_url

    url = resolve_url(base)
    made: list[str] = []

    def admin() -> Any:
        return psycopg.connect(
            host=url.host,
            port=url.port or 5432,
            user=url.username,
            dbname=url.database,
            autocommit=True,
            connect_timeout=3,
        )

    try:
        admin().close()
    except psycopg.OperationalError as exc:
        print(f"[postgresql] skipped: {str(exc).strip().splitlines()[0]}")
        return None

    def create() -> str:
        name = f"tl_bench_{uuid.uuid4().hex[:10]}"
        with admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return url.set(database=name).render_as_string(hide_password=False)

    def drop_all() -> None:
        with admin() as conn:
            for name in made:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return create, drop_all


def backend_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that choose the backends a store benchmark measures: ``--pg URL``, ``--no-pg``, ``--no-sqlite``."""
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--conversations", type=int, default=100_000)
    backend_flags(parser)
    parser.add_argument("--no-list", action="store_true", help="import figures only")
    parser.add_argument("--repeat", type=int, default=3, help="import/floor pairs per backend; the best of each counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        path = work / "messages.jsonl"
        n = write_input(path, args.messages)
        print(f"input: {n:,} messages, {path.stat().st_size / 1e6:.1f} MB")
        counter = iter(range(1_000_000))
        if not args.no_sqlite:
            bench_import(lambda: str(work / f"db{next(counter)}.db"), path, n, args.repeat)
            if not args.no_list:
                bench_list(str(work / "list.db"), args.conversations)
        pg = None if args.no_pg else pg_database(args.pg)
        if pg is not None:
            create, drop_all = pg
            try:
                bench_import(create, path, n, args.repeat)
                if not args.no_list:
                    bench_list(create(), args.conversations)
            finally:
                drop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
