"""Importing messages: each file is all-or-nothing and importing the same messages again is a no-op.

Streamed. Each message is validated and its row derived (figures, search text, serialised JSON) as the reader yields
it (``core.store.import_prepare``); rows are written in batches as they come (``write``), on a thread of their own
while the next batch is read (``core.store.batch_writer``), all in one write transaction, so memory holds two
batches whatever the file's size and bad input or an interruption anywhere leaves nothing behind. Imports are
serialised (one writer path): SQLite's BEGIN IMMEDIATE takes the database's write lock for the whole import (readers
go on, WAL), PostgreSQL takes a transaction-scoped advisory lock. In each batch, the identities (conversation_id,
msg_id) already stored are looked up: the same message is skipped, a different one refuses the file unless
``replace`` (``core.store.versions``). The conversation figures grow by exactly the messages stored now
(``core.store.import_figures``), and COPY (PostgreSQL) or a plain ``executemany`` (SQLite) inserts them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from sqlalchemy import Connection, Engine, delete, select

from core.messages.door import gc_paused
from core.reader import BadMessages
from core.store.backend import backend_of
from core.store.backend.base import MessageBatch
from core.store.batch_writer import BatchWriter
from core.store.engine import write_transaction
from core.store.import_figures import Delta, apply_deltas, deltas, new_conversation
from core.store.import_lines import PreparedLine, write_lines
from core.store.import_prepare import PreparedMessage
from core.store.pg_search import Chunk
from core.store.refigure import refigure
from core.store.search_pieces import SearchPieces
from core.store.statistics import analyze_after_import
from core.store.tables import CONVERSATIONS, MESSAGES
from core.store.versions import Identity, conflict_in_file, conflict_with_stored, same_message, stored_versions
from core.store.views import ImportSummary

CHUNK = 1000
"""Rows per INSERT batch: big enough to amortise round trips, small enough for SQLite's variable limit."""

IMPORT_LOCK = 0x7472_6C76
"""PostgreSQL advisory lock key that serialises imports (any constant unique to Traceloupe)."""


@dataclass(slots=True)
class _Written:
    """What a streamed import has done so far, across its batches: no row is kept, only counts and keys."""

    source: str
    read: int = 0
    imported: int = 0
    damaged: int = 0
    replaced: int = 0
    first_row: int | None = None
    """The first message row id this import gave: a stored version from this row on was read from this file."""
    seen: dict[int, int] = field(default_factory=dict)
    """Each identity read so far (its hash) and its place in the file (line, or index in a JSON array), to find a
    repeat in a later batch: a few dozen bytes a message."""
    created: set[int] = field(default_factory=set)
    """Conversations this import created: they hold only what it stored."""
    changed: set[int] = field(default_factory=set)
    """Conversations that received at least one message."""
    refigured: set[int] = field(default_factory=set)
    """Conversations of which a message was replaced: their figures are counted again at the end."""
    digest_due: dict[str, None] = field(default_factory=dict)


class WriteOptions(TypedDict, total=False):
    """What :func:`write_in` takes besides the connection, the messages and their source (its defaults apply)."""

    replace: bool
    store_lines: Callable[[], Sequence[PreparedLine]]
    bad: BadMessages | None
    digest_min_records: int | None


def write(
    engine: Engine, prepared: Iterable[PreparedMessage], *, source: str, **options: Unpack[WriteOptions]
) -> ImportSummary:
    """Store prepared messages as they come (then the file's other records) in one write transaction; InputError
    (nothing written) on a conflicting version.

    Messages are written in batches (at most CHUNK of them, BATCH_BYTES of text) as they are read, each on the
    writer thread while the next is read, so memory holds two batches, whatever the file's size; the transaction
    makes the file all-or-nothing all the same, an exception or Ctrl-C anywhere rolling it back. A message or record
    already stored as it is is skipped. A different one under a stored identity refuses the file, or with
    ``replace`` takes the stored one's place. ``store_lines`` gives the file's other records once its messages are
    read; ``bad`` is checked then too (once a bad message is noted, no more batches are written).
    ``digest_min_records``: the summary names the conversations changed that hold at least that many
    records, whose pages are worth making ahead.
    """
    # The cyclic GC would rescan a large message's many objects again and again while it is prepared; what a
    # message leaves behind is freed by reference counting, so memory stays bounded with the collector paused.
    with gc_paused(), write_transaction(engine, label=f"the import of {source}") as conn:
        summary = write_in(conn, prepared, source=source, **options)
    analyze_after_import(engine, summary.imported)
    return summary


def write_in(
    conn: Connection,
    prepared: Iterable[PreparedMessage],
    *,
    source: str,
    replace: bool = False,
    store_lines: Callable[[], Sequence[PreparedLine]] = tuple,
    bad: BadMessages | None = None,
    digest_min_records: int | None = None,
) -> ImportSummary:
    """``write`` within the caller's write transaction (the live ingest's assembly writes more beside it)."""
    done = _Written(source=source)
    backend = backend_of(conn)
    backend.lock(conn, IMPORT_LOCK)
    backend.unbounded_statements(conn)  # an import runs as long as its file needs

    def write_batch(batch: list[PreparedMessage]) -> None:
        _write_batch(conn, batch, done, replace, digest_min_records)  # looked up at each call (tests wrap it)

    with BatchWriter(write_batch, threaded=backend.writes_out_of_process) as writer:
        batch: list[PreparedMessage] = []
        size = 0
        for item in prepared:
            done.read += 1
            if bad is not None and bad.errors:
                continue  # the file is refused at the end: read on only to report every bad line
            batch.append(item)
            size += len(item.row["body"])
            if len(batch) >= CHUNK or size >= BATCH_BYTES:
                writer.put(batch)
                batch, size = [], 0
        if bad is not None:
            bad.check()
        if batch:
            writer.put(batch)
        del batch
    records_stored = write_lines(conn, store_lines(), replace=replace)
    if done.refigured:
        refigure(conn, sorted(done.refigured))
    return ImportSummary(
        source=source,
        read=done.read,
        imported=done.imported,
        skipped=done.read - done.imported,
        conversations=len(done.changed),
        new_conversations=len(done.changed & done.created),
        damaged=done.damaged,
        replaced=done.replaced,
        records=records_stored,
        digest_due=tuple(done.digest_due),
    )


BATCH_BYTES = 8 * 1024 * 1024
"""Message text per batch at most (a batch of one message may hold more): memory holds two batches."""


def _write_batch(
    conn: Connection, batch: list[PreparedMessage], done: _Written, replace: bool, digest_min_records: int | None
) -> None:
    """Store one batch of the file's messages: its conversations, the messages not stored yet, their figures."""
    unique = _one_per_identity(batch)
    # A conversation created now receives every message of the batch it has (none of them can be stored yet):
    # it is created with their figures, and only the conversations stored before are updated.
    pks, created = _conversation_pks(conn, deltas(unique, set(unique)))
    done.created |= created
    stored, replaced = _insert_messages(conn, list(unique.values()), pks, done, replace)
    added = deltas(unique, stored)
    apply_deltas(conn, added, pks, created=created)
    changed = {pks[cid] for cid in added}
    done.changed |= changed
    done.imported += len(stored)
    done.damaged += sum(d.damaged for d in added.values())
    done.replaced += len(replaced)
    done.refigured.update(pks[cid] for cid, _ in replaced)
    if digest_min_records is not None and changed:
        c = CONVERSATIONS.c
        large = select(c.conversation_id).where(c.id.in_(changed), c.records >= digest_min_records)
        done.digest_due.update(dict.fromkeys(conn.execute(large).scalars()))


def _one_per_identity(prepared: Sequence[PreparedMessage]) -> dict[Identity, PreparedMessage]:
    """The batch's messages by identity; a repeat is dropped when it is the same message, refused when not."""
    unique: dict[Identity, PreparedMessage] = {}
    for item in prepared:
        first = unique.setdefault(item.identity, item)
        if first is not item and not same_message(first.row["body"], item.row["body"]):
            raise conflict_in_file(
                item.identity,
                source=item.row["source"],
                line=item.row["line"],
                path=f"{item.root}.msg_id",
                first=first.place,
            )
    return unique


def _conversation_pks(conn: Connection, figures: dict[str, Delta]) -> tuple[dict[str, int], set[int]]:
    """The primary key of each conversation id, creating the missing ones with the given figures; also which were
    created.

    Only an import creates conversations, under the import lock: one missing at the look-up is created by
    this import's insert, which goes by the backend's bulk path (one statement over arrays on PostgreSQL).
    """
    backend = backend_of(conn)
    created: set[int] = set()
    pks: dict[str, int] = {}
    ids = list(figures)
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        pks.update(_pks_of(conn, chunk))
        missing = [cid for cid in chunk if cid not in pks]
        if missing:
            made = backend.insert_conversations(conn, [new_conversation(cid, figures[cid]) for cid in missing])
            pks.update(made)
            created.update(made.values())
    return pks, created


def _pks_of(conn: Connection, ids: list[str]) -> dict[str, int]:
    c = CONVERSATIONS.c
    wanted = backend_of(conn).one_of(c.conversation_id, ids)
    return {cid: pk for pk, cid in conn.execute(select(c.id, c.conversation_id).where(wanted))}


def _insert_messages(
    conn: Connection, items: list[PreparedMessage], pks: dict[str, int], done: _Written, replace: bool
) -> tuple[set[Identity], set[Identity]]:
    """Insert the messages not stored yet (with ``replace``, also those stored in another version).

    Returns the identities stored now and, among them, those that replaced a stored version. Runs
    under the import lock, so the look-up and the insert see the same state. A conversation created
    by this import holds only what it stored, so its messages are looked up only when read before.
    """
    stored: set[Identity] = set()
    replaced: set[Identity] = set()

    def may_be_stored(p: PreparedMessage) -> bool:
        return pks[p.conversation_id] not in done.created or hash(p.identity) in done.seen

    existing = stored_versions(conn, ((pks[p.conversation_id], p.identity) for p in items if may_be_stored(p)))
    fresh: list[PreparedMessage] = []
    stale: list[int] = []
    for p in items:
        version = existing.get(p.identity)
        if version is not None:
            if same_message(version.text, p.row["body"]):
                continue
            path = f"{p.root}.msg_id"
            first = done.seen.get(hash(p.identity))
            if first is not None or (done.first_row is not None and version.row >= done.first_row):
                where = "an earlier message" if first is None else _place(first, json_array=p.row["line"] is None)
                raise conflict_in_file(p.identity, source=p.row["source"], line=p.row["line"], path=path, first=where)
            if not replace:
                raise conflict_with_stored(p.identity, version, source=p.row["source"], line=p.row["line"], path=path)
            stale.append(version.row)
            replaced.add(p.identity)
        fresh.append(p)
    for p in items:
        done.seen.setdefault(hash(p.identity), p.row["line"] if p.row["line"] is not None else _index(p.root))
    if fresh:
        rows = [{**p.row, "conversation_pk": pks[p.conversation_id]} for p in fresh]
        first_row = _executemany_messages(conn, rows, [(p.outline, p.search, p.chunks) for p in fresh], stale)
        if done.first_row is None:
            done.first_row = first_row
    stored.update(p.identity for p in fresh)
    return stored, replaced


def _index(root: str) -> int:
    """The index in ``$[i]``: where a message of a JSON array is."""
    return int(root[2:-1])


def _place(position: int, *, json_array: bool) -> str:
    return f"$[{position}]" if json_array else f"line {position}"


def _executemany_messages(
    conn: Connection,
    rows: list[dict[str, Any]],
    beside: list[tuple[str | None, SearchPieces | None, list[Chunk] | None]],
    stale: list[int],
) -> int:
    """INSERT message rows, their outlines and search pieces after the first (on PostgreSQL also their texts and
    search chunks) in bulk, in place of ``stale`` rows; the first row id given.

    SQLite: the driver's own executemany. PostgreSQL: COPY (``core.store.bulk``). The statements are
    compiled from the Tables (no hand-written SQL; values stay bound or travel in COPY's stream).
    JSON columns already hold JSON text (a str, or RawJSON), so SQLAlchemy's per-value JSON wrapping is
    skipped: about a tenth of PostgreSQL's write time.

    Ids are given here, not by the database, so each outline row can name its message: under the
    import lock nothing else inserts on SQLite (BEGIN IMMEDIATE), and PostgreSQL's ids come from
    the table's own sequence. The ids are taken before the stale rows go (their outlines and texts
    go with them), so no id is used twice: an outline read before stays a description of its row.
    """
    ids = backend_of(conn).message_ids(conn, len(rows))
    if stale:
        backend_of(conn).forget_messages(conn, stale)
        conn.execute(delete(MESSAGES).where(MESSAGES.c.id.in_(stale)))
    for pk, row in zip(ids, rows, strict=True):
        row["id"] = pk
    outline_rows = [
        {"message_pk": row["id"], "outline": outline}
        for row, (outline, _, _) in zip(rows, beside, strict=True)
        if outline is not None
    ]
    pieced = [
        (row["id"], search) for row, (_, search, _) in zip(rows, beside, strict=True) if search and len(search) > 1
    ]
    chunked = {row["id"]: chunks for row, (_, _, chunks) in zip(rows, beside, strict=True) if chunks is not None}
    backend_of(conn).write_messages(conn, MessageBatch(rows, outline_rows, pieced, chunked))
    return ids[0]
