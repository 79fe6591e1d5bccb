"""Importing messages: each file is all-or-nothing and importing the same messages again is a no-op.

Streamed. Each message is validated and its row derived (figures, search text, serialised JSON) as
the reader yields it (``prepared_messages``); rows are written in batches as they come (``write``),
all in one write transaction, so memory holds one batch whatever the file's size and bad input or
an interruption anywhere leaves nothing behind. Imports are serialised (one writer path): SQLite's
BEGIN IMMEDIATE takes the database's write lock for the whole import (readers go on, WAL), PostgreSQL
takes a transaction-scoped advisory lock. In each batch, the identities (conversation_id, msg_id)
already stored are looked up: the same message is skipped, a different one refuses the file unless
``replace`` (``core.store.versions``). The conversation figures grow by exactly the messages stored
now, and COPY (PostgreSQL) or a plain ``executemany`` (SQLite) inserts them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    BigInteger,
    Connection,
    Engine,
    Integer,
    Text,
    and_,
    case,
    delete,
    or_,
    select,
    update,
)

from core.errors import InputError
from core.messages.door import gc_paused
from core.messages.union import MESSAGE_ADAPTER
from core.reader import BadMessages, Record
from core.store.backend import backend_of
from core.store.derive import derived_msg_id, figures, title_of
from core.store.engine import write_transaction
from core.store.import_lines import PreparedLine, write_lines
from core.store.jsonio import RawJSON, dumps
from core.store.outline import dump_with_outline
from core.store.refigure import refigure
from core.store.statistics import analyze_after_import
from core.store.tables import (
    CONVERSATION_KINDS,
    CONVERSATIONS,
    MAX_ID_CHARS,
    MESSAGES,
)
from core.store.versions import Identity, conflict_in_file, conflict_with_stored, same_message, stored_versions
from core.store.views import ImportSummary

CHUNK = 1000
"""Rows per INSERT batch: big enough to amortise round trips, small enough for SQLite's variable limit."""

_MAX_BIGINT = 2**63 - 1
_MIN_BIGINT = -(2**63)

IMPORT_LOCK = 0x7472_6C76
"""PostgreSQL advisory lock key that serialises imports (any constant unique to Traceloupe)."""


@dataclass(slots=True)
class PreparedMessage:
    """One message ready to store: its row values and what it adds to its conversation."""

    conversation_id: str
    row: dict[str, Any]
    kinds: frozenset[str]
    last_ts: int
    title: str | None
    outline: str | None = None
    """Where its trace records sit in ``row["body"]`` (``core.store.outline``)."""
    root: str = "$"
    """Its JSON path in the file: ``$`` on its own line, ``$[i]`` in an array."""

    @property
    def identity(self) -> Identity:
        return (self.conversation_id, self.row["msg_id"])

    @property
    def place(self) -> str:
        """Where it is in its file, for an error that points at it from elsewhere."""
        return f"line {self.row['line']}" if self.row["line"] is not None else self.root


@dataclass(slots=True)
class _Delta:
    """What the messages stored now add to one conversation."""

    messages: int = 0
    turns: int = 0
    records: int = 0
    damaged: int = 0
    first_ts: int | None = None
    last_activity: int | None = None
    title: str | None = None
    title_ts: int | None = None
    kinds: set[str] = field(default_factory=set)


def prepared_messages(
    records: Iterable[Record], *, postgres: bool = False, bad: BadMessages | None = None
) -> Iterator[PreparedMessage]:
    """Validate and derive the row of each message as it is read; raises InputError (naming file and line) on bad
    input.

    With ``bad`` (the reader's), a message that cannot be stored is noted there and the others are
    still prepared, so that every bad line of the file is reported at once. PostgreSQL's JSONB cannot
    hold U+0000, so with ``postgres`` a string containing it is refused here, as bad input, rather than
    failing the transaction later.
    """
    now = time.time_ns() // 1_000_000
    for record in records:
        try:
            prepared = _prepare(record, postgres, now)
        except InputError as error:
            if bad is None:
                raise
            bad.note(error)
            continue
        del record  # the parsed message is garbage once its row is made: only the row stays for the batch
        yield prepared


def _prepare(record: Record, postgres: bool, now: int) -> PreparedMessage:
    message = record.message
    raw = record.raw
    # The text and its outline's byte spans: SQLite stores the text as ``body``; PostgreSQL keeps JSONB
    # (its own rendering) in ``body`` and this text beside it, in ``message_texts``.
    try:
        body, outline = dump_with_outline(raw, message)
    except RecursionError:  # the reader's nesting limit keeps this out; a net, not a path
        raise InputError("nested too deeply to store", source=record.source, line=record.line, path="$") from None
    if postgres and b"\\u0000" in body:
        _refuse_nul(raw, record)
    text = RawJSON(body.decode())
    del body  # a large message's text is held once, as the row's
    raw_id = raw.get("msg_id")
    msg_id = raw_id if isinstance(raw_id, str) else derived_msg_id(raw)
    _check_id_length("msg_id", msg_id, record)
    _check_id_length("conversation_id", message.conversation_id, record)
    fig = figures(message)
    if not (message.create_ts >= _MIN_BIGINT and fig.last_ts <= _MAX_BIGINT):
        raise InputError(
            "create_ts is outside the 64-bit range of a millisecond timestamp",
            source=record.source,
            line=record.line,
            path="$.create_ts",
        )
    msg_type = getattr(message, "msg_type", None)
    search_text = fig.search_text.replace("\x00", "") if postgres else fig.search_text
    row = {
        "msg_id": msg_id,
        "role": message.role,
        "msg_type": msg_type if isinstance(msg_type, str) else None,
        "kind": message.tag,
        "create_ts": message.create_ts,
        "records": fig.records,
        "damaged": fig.damaged,
        "body": text,
        "parsed": _parsed_json(record),
        "search_text": search_text,
        "source": record.source,
        "line": record.line,
        "imported_at": now,
    }
    return PreparedMessage(
        conversation_id=message.conversation_id,
        row=row,
        kinds=fig.kinds,
        last_ts=fig.last_ts,
        title=title_of(message),
        outline=None if outline is None else dumps(outline).decode(),
        root="$" if record.line is not None else f"$[{record.index}]",
    )


def _check_id_length(key: str, value: str, record: Record) -> None:
    if len(value) > MAX_ID_CHARS:
        raise InputError(
            f"{key} is {len(value):,} characters long; ids are at most {MAX_ID_CHARS} characters",
            source=record.source,
            line=record.line,
            path=f"$.{key}",
        )


def _parsed_json(record: Record) -> RawJSON:
    """What the parser made of a message, as JSON text (the reader's, when its nesting check wrote it)."""
    written = record.written if record.written is not None else MESSAGE_ADAPTER.dump_json(record.message)
    return RawJSON(written.decode())


def _refuse_nul(raw: dict[str, Any], record: Record) -> None:
    stack: list[tuple[Any, str]] = [(raw, "$")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                raise InputError(
                    "contains U+0000, which PostgreSQL cannot store in JSONB",
                    source=record.source,
                    line=record.line,
                    path=path,
                )
        elif isinstance(value, dict):
            for key, item in value.items():
                if "\x00" in key:
                    raise InputError("a key contains U+0000", source=record.source, line=record.line, path=path)
                stack.append((item, f"{path}.{key}"))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(value))


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


def write(
    engine: Engine,
    prepared: Iterable[PreparedMessage],
    *,
    source: str,
    replace: bool = False,
    store_lines: Callable[[], Sequence[PreparedLine]] = tuple,
    bad: BadMessages | None = None,
    digest_min_records: int | None = None,
) -> ImportSummary:
    """Store prepared messages as they come (then the file's other records) in one write transaction; InputError
    (nothing written) on a conflicting version.

    Messages are written in batches (at most CHUNK of them, BATCH_BYTES of text) as they are read, so
    memory holds one batch, whatever the file's size; the transaction makes the file all-or-nothing
    all the same, an exception or Ctrl-C anywhere rolling it back. A message or record already stored as
    it is is skipped. A different one under a stored identity refuses the file, or with ``replace``
    takes the stored one's place. ``store_lines`` gives the file's other records once its messages are
    read; ``bad`` is checked then too (once a bad message is noted, no more batches are written).
    ``digest_min_records``: the summary names the conversations changed that hold at least that many
    records, whose pages are worth making ahead.
    """
    done = _Written(source=source)
    # The cyclic GC would rescan a large message's many objects again and again while it is prepared; what a
    # message leaves behind is freed by reference counting, so memory stays bounded with the collector paused.
    with gc_paused(), write_transaction(engine, label=f"the import of {source}") as conn:
        backend = backend_of(conn)
        backend.lock(conn, IMPORT_LOCK)
        backend.unbounded_statements(conn)  # an import runs as long as its file needs
        batch: list[PreparedMessage] = []
        size = 0
        for item in prepared:
            done.read += 1
            if bad is not None and bad.errors:
                continue  # the file is refused at the end: read on only to report every bad line
            batch.append(item)
            size += len(item.row["body"])
            if len(batch) >= CHUNK or size >= BATCH_BYTES:
                _write_batch(conn, batch, done, replace, digest_min_records)
                batch, size = [], 0
        if bad is not None:
            bad.check()
        if batch:
            _write_batch(conn, batch, done, replace, digest_min_records)
        del batch
        records_stored = write_lines(conn, store_lines(), replace=replace)
        if done.refigured:
            refigure(conn, sorted(done.refigured))
    analyze_after_import(engine, done.imported)
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
"""Message text per batch at most (a batch of one message may hold more): memory holds one batch."""


def _write_batch(
    conn: Connection, batch: list[PreparedMessage], done: _Written, replace: bool, digest_min_records: int | None
) -> None:
    """Store one batch of the file's messages: its conversations, the messages not stored yet, their figures."""
    unique = _one_per_identity(batch)
    pks, created = _conversation_pks(conn, list(dict.fromkeys(p.conversation_id for p in unique.values())))
    done.created |= created
    stored, replaced = _insert_messages(conn, list(unique.values()), pks, done, replace)
    deltas = _deltas(unique, stored)
    _apply_deltas(conn, deltas, pks)
    changed = {pks[cid] for cid in deltas}
    done.changed |= changed
    done.imported += len(stored)
    done.damaged += sum(d.damaged for d in deltas.values())
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


def _dialect_insert(conn: Connection) -> Any:
    return backend_of(conn).insert


def _conversation_pks(conn: Connection, ids: list[str]) -> tuple[dict[str, int], set[int]]:
    """The primary key of each conversation id, creating the missing ones; also which were created."""
    insert = _dialect_insert(conn)
    created: set[int] = set()
    pks: dict[str, int] = {}
    c = CONVERSATIONS.c
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        stmt = insert(CONVERSATIONS).on_conflict_do_nothing(index_elements=["conversation_id"]).returning(c.id)
        created.update(conn.execute(stmt, [{"conversation_id": cid} for cid in chunk]).scalars())
        pks.update(
            (cid, pk) for pk, cid in conn.execute(select(c.id, c.conversation_id).where(c.conversation_id.in_(chunk)))
        )
    return pks, created


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
        first_row = _executemany_messages(conn, rows, [p.outline for p in fresh], stale)
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
    conn: Connection, rows: list[dict[str, Any]], outlines: list[str | None], stale: list[int]
) -> int:
    """INSERT message rows and their outlines (on PostgreSQL also their texts) in bulk, in place of ``stale`` rows;
    the first row id given.

    SQLite: the driver's own executemany. PostgreSQL: COPY (``core.store.bulk``). The statements are
    compiled from the Tables (no hand-written SQL; values stay bound or travel in COPY's stream).
    JSON columns already hold JSON text (RawJSON), so SQLAlchemy's per-value JSON wrapping is
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
        for row, outline in zip(rows, outlines, strict=True)
        if outline is not None
    ]
    backend_of(conn).write_messages(conn, rows, outline_rows)
    return ids[0]


def _deltas(unique: dict[Identity, PreparedMessage], stored: set[Identity]) -> dict[str, _Delta]:
    deltas: dict[str, _Delta] = {}
    for identity, item in unique.items():
        if identity not in stored:
            continue
        d = deltas.setdefault(item.conversation_id, _Delta())
        ts = item.row["create_ts"]
        d.messages += 1
        d.turns += item.row["role"] == "user"
        d.records += item.row["records"]
        d.damaged += item.row["damaged"]
        d.first_ts = ts if d.first_ts is None else min(d.first_ts, ts)
        d.last_activity = item.last_ts if d.last_activity is None else max(d.last_activity, item.last_ts)
        # File order breaks create_ts ties, as FORMAT.md orders a conversation: keep the earlier one.
        if item.title is not None and (d.title_ts is None or ts < d.title_ts):
            d.title, d.title_ts = item.title, ts
        d.kinds |= item.kinds
    return deltas


_DELTA_TYPES: dict[str, Any] = {
    "d_pk": Integer,
    "d_messages": Integer,
    "d_turns": Integer,
    "d_records": Integer,
    "d_damaged": Integer,
    "d_first_ts": BigInteger,
    "d_last_activity": BigInteger,
    "d_title": Text,
    "d_title_ts": BigInteger,
}
"""What an import adds to one conversation's figures, by column of the delta source."""


def _delta_update(d: Any) -> Any:
    """The conversations UPDATE that adds a delta; ``d`` gives the delta columns by name (bind parameters
    for one row at a time, or the columns of an unnested source for all rows at once)."""
    c = CONVERSATIONS.c
    first, last, title_ts = d["d_first_ts"], d["d_last_activity"], d["d_title_ts"]
    takes_title = and_(title_ts.is_not(None), or_(c.title_ts.is_(None), c.title_ts > title_ts))
    return update(CONVERSATIONS).values(
        messages=c.messages + d["d_messages"],
        turns=c.turns + d["d_turns"],
        records=c.records + d["d_records"],
        damaged=c.damaged + d["d_damaged"],
        first_ts=case((or_(c.first_ts.is_(None), c.first_ts > first), first), else_=c.first_ts),
        last_activity=case((or_(c.last_activity.is_(None), c.last_activity < last), last), else_=c.last_activity),
        title=case((takes_title, d["d_title"]), else_=c.title),
        title_ts=case((takes_title, title_ts), else_=c.title_ts),
    )


def _apply_deltas(conn: Connection, deltas: dict[str, _Delta], pks: dict[str, int]) -> None:
    if not deltas:
        return
    rows = [
        {
            "d_pk": pks[cid],
            "d_messages": d.messages,
            "d_turns": d.turns,
            "d_records": d.records,
            "d_damaged": d.damaged,
            "d_first_ts": d.first_ts,
            "d_last_activity": d.last_activity,
            "d_title": d.title,
            "d_title_ts": d.title_ts,
        }
        for cid, d in deltas.items()
    ]
    backend = backend_of(conn)
    backend.update_each(conn, lambda d: _delta_update(d).where(CONVERSATIONS.c.id == d["d_pk"]), _DELTA_TYPES, rows)
    kinds = [{"conversation_pk": pks[cid], "kind": kind} for cid, d in deltas.items() for kind in sorted(d.kinds)]
    backend.insert_new(conn, CONVERSATION_KINDS, kinds)
