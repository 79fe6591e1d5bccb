"""Importing messages: each file is all-or-nothing and importing the same messages again is a no-op.

Two phases. *Prepare* reads and validates the whole file and derives every row
(figures, search text, serialised JSON) outside any transaction; bad input raises
InputError before anything is written. *Write* stores the rows in one short write
transaction. Imports are serialised (one writer path): SQLite's BEGIN IMMEDIATE
takes the database's write lock, PostgreSQL takes a transaction-scoped advisory
lock. Inside it, the identities (conversation_id, msg_id) already stored are looked
up: the same message is skipped, a different one refuses the file unless ``replace``
(``core.store.versions``). The conversation figures grow by exactly the messages
stored now, and a plain ``executemany`` (the fastest path on both drivers) inserts them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
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

Progress = Callable[[int, int], None]
"""Called as ``(rows written, rows to write)`` after each batch of the write phase."""


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


def prepare(
    records: Iterable[Record], *, postgres: bool = False, bad: BadMessages | None = None
) -> list[PreparedMessage]:
    """Validate and derive every row of one file; raises InputError (naming file and line) on bad input.

    With ``bad`` (the reader's), a message that cannot be stored is noted there and the others are
    still prepared, so that every bad line of the file is reported at once. PostgreSQL's JSONB cannot
    hold U+0000, so with ``postgres`` a string containing it is refused here, as bad input, rather than
    failing the transaction later.
    """
    now = time.time_ns() // 1_000_000
    out: list[PreparedMessage] = []
    # The whole file's objects stay alive until the write: with the cyclic GC running, every few
    # thousand allocations it would rescan all of them, which makes a large read several times slower.
    with gc_paused():
        for record in records:
            try:
                out.extend(_prepare((record,), postgres, now))
            except InputError as error:
                if bad is None:
                    raise
                bad.note(error)
    return out


def _prepare(records: Iterable[Record], postgres: bool, now: int) -> list[PreparedMessage]:
    out: list[PreparedMessage] = []
    for record in records:
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
            "body": RawJSON(body.decode()),
            "parsed": _parsed_json(record),
            "search_text": search_text,
            "source": record.source,
            "line": record.line,
            "imported_at": now,
        }
        out.append(
            PreparedMessage(
                conversation_id=message.conversation_id,
                row=row,
                kinds=fig.kinds,
                last_ts=fig.last_ts,
                title=title_of(message),
                outline=None if outline is None else dumps(outline).decode(),
                root="$" if record.line is not None else f"$[{record.index}]",
            )
        )
    return out


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


def write(
    engine: Engine,
    prepared: Sequence[PreparedMessage],
    *,
    source: str,
    progress: Progress | None = None,
    replace: bool = False,
    store_lines: Sequence[PreparedLine] = (),
) -> ImportSummary:
    """Store prepared messages (then the file's other records) in one write transaction; InputError (nothing
    written) on a conflicting version.

    A message or record already stored as it is is skipped. A different one under a stored identity
    refuses the file, or with ``replace`` takes the stored one's place.
    """
    unique = _one_per_identity(prepared)
    with gc_paused(), write_transaction(engine, label=f"the import of {source}") as conn:
        backend_of(conn).lock(conn, IMPORT_LOCK)
        pks, created = _conversation_pks(conn, list(dict.fromkeys(p.conversation_id for p in unique.values())))
        stored, replaced = _insert_messages(conn, list(unique.values()), pks, created, progress, replace)
        deltas = _deltas(unique, stored)
        _apply_deltas(conn, deltas, pks)
        records_stored = write_lines(conn, store_lines, replace=replace)
        if replaced:
            refigure(conn, sorted({pks[cid] for cid, _ in replaced}))
    analyze_after_import(engine, len(stored))
    return ImportSummary(
        source=source,
        read=len(prepared),
        imported=len(stored),
        skipped=len(prepared) - len(stored),
        conversations=len(deltas),
        new_conversations=sum(1 for cid in deltas if pks[cid] in created),
        damaged=sum(d.damaged for d in deltas.values()),
        replaced=len(replaced),
        records=records_stored,
    )


def _one_per_identity(prepared: Sequence[PreparedMessage]) -> dict[Identity, PreparedMessage]:
    """The file's messages by identity; a repeat is dropped when it is the same message, refused when not."""
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
    conn: Connection,
    items: list[PreparedMessage],
    pks: dict[str, int],
    created: set[int],
    progress: Progress | None,
    replace: bool,
) -> tuple[set[Identity], set[Identity]]:
    """Insert the messages not stored yet (with ``replace``, also those stored in another version).

    Returns the identities stored now and, among them, those that replaced a stored version. Runs
    under the import lock, so the look-up and the insert see the same state. A conversation created
    by this import holds nothing yet, so its messages are not looked up.
    """
    stored: set[Identity] = set()
    replaced: set[Identity] = set()
    for start in range(0, len(items), CHUNK):
        chunk = items[start : start + CHUNK]
        wanted = ((pks[p.conversation_id], p.identity) for p in chunk if pks[p.conversation_id] not in created)
        existing = stored_versions(conn, wanted)
        fresh: list[PreparedMessage] = []
        stale: list[int] = []
        for p in chunk:
            version = existing.get(p.identity)
            if version is not None:
                if same_message(version.text, p.row["body"]):
                    continue
                if not replace:
                    raise conflict_with_stored(
                        p.identity, version, source=p.row["source"], line=p.row["line"], path=f"{p.root}.msg_id"
                    )
                stale.append(version.row)
                replaced.add(p.identity)
            fresh.append(p)
        rows = [{**p.row, "conversation_pk": pks[p.conversation_id]} for p in fresh]
        if rows:
            _executemany_messages(conn, rows, [p.outline for p in fresh], stale)
        stored.update(p.identity for p in fresh)
        if progress is not None:
            progress(start + len(chunk), len(items))
    return stored, replaced


def _executemany_messages(
    conn: Connection, rows: list[dict[str, Any]], outlines: list[str | None], stale: list[int]
) -> None:
    """INSERT message rows and their outlines (on PostgreSQL also their texts) in bulk, in place of ``stale`` rows.

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
        conn.execute(delete(MESSAGES).where(MESSAGES.c.id.in_(stale)))
    for pk, row in zip(ids, rows, strict=True):
        row["id"] = pk
    outline_rows = [
        {"message_pk": row["id"], "outline": outline}
        for row, outline in zip(rows, outlines, strict=True)
        if outline is not None
    ]
    backend_of(conn).write_messages(conn, rows, outline_rows)


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
