"""SQLite: one file, WAL mode, a transaction begun by hand, FTS5 search, message bodies read in place.

The file runs in WAL mode with a busy timeout, foreign keys on and ``synchronous=NORMAL``.
Python's sqlite3 begins transactions lazily and DEFERRED, and a deferred transaction that later
writes fails at once with "database is locked" whatever the busy timeout (the bug t8y2/dbx PR
#6990 fixed); so the driver's own transaction handling is switched off and every transaction is
begun here: ``BEGIN IMMEDIATE`` on a write connection (it waits for the lock up front, within the
busy timeout), plain ``BEGIN`` on a read connection (WAL readers never block).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import (
    ClauseElement,
    ColumnElement,
    CompoundSelect,
    Connection,
    Engine,
    Executable,
    FromClause,
    Select,
    Table,
    bindparam,
    case,
    column,
    create_engine,
    event,
    exists,
    func,
    insert,
    literal,
    literal_column,
    or_,
    select,
    text,
    union,
    union_all,
    values,
)
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import URL

from core.jsonio import loads
from core.store.backend.base import WRITE_OPTION, BackendName, ColumnTypes, MessageBatch, Rows
from core.store.bulk import executemany, executemany_rows
from core.store.casefold import caseless, fold
from core.store.errors import StoreError
from core.store.grams import (
    CONVERSATION_GRAMS_TABLE,
    GRAMS_FUNCTION,
    GRAMS_TABLE,
    MAX_GRAM,
    forget_grams,
    token,
    tokens,
    write_grams,
)
from core.store.jsonio import dumps_text
from core.store.pg_search import contains_pattern
from core.store.search_pieces import PIECE_STRIDE, SearchPieces, stored_pieces
from core.store.settings import EngineSettings
from core.store.spilled_body import SpilledBody
from core.store.tables import CONVERSATIONS, MESSAGE_OUTLINES, MESSAGE_SEARCH_PIECES, MESSAGES

log = logging.getLogger("traceloupe.store")

_INDEX_MESSAGES = text(
    "INSERT INTO message_fts(rowid, search_text) SELECT id, search_text FROM messages WHERE id BETWEEN :first AND :last"
)
"""The search index's rows for the messages just written (revision 0021: no trigger fills it)."""
_INDEX_PIECES = text(
    "INSERT INTO search_piece_fts(rowid, text) SELECT p.id, p.text FROM message_search_pieces AS p "
    "WHERE p.message_pk BETWEEN :first AND :last"
)
"""The search index's rows for the search pieces just written (revision 0028)."""

_INDEX_CONVERSATIONS = (
    text(
        "INSERT INTO conversation_fts(rowid, conversation_id, title) "
        "SELECT id, conversation_id, title FROM conversations WHERE id > :after"
    ),
    text(
        f"INSERT INTO {CONVERSATION_GRAMS_TABLE}(rowid, grams) "  # noqa: S608 - a constant
        f"SELECT id, {GRAMS_FUNCTION}(conversation_id || char(10) || title) FROM conversations WHERE id > :after"
    ),
)
"""The search indexes' rows for the conversations just written, their ids above ``after`` (revision 0029: no
trigger fills them); id and title grams as the update trigger writes them (revision 0020)."""

LOWER_FUNCTION = "traceloupe_lower"
"""Search's case fold (``core.store.casefold``) as an SQL function. SQLite's own ``lower()`` and ``LIKE``
fold ASCII letters only, so ``é`` would not find "École"; PostgreSQL's chunks fold every letter."""

PRIVATE_FILE_MODE = 0o600
"""A new database file is readable by its owner only (traces hold whatever the agent saw);
SQLite gives its -wal and -shm files the database file's mode."""

_M = MESSAGES.c
_C = CONVERSATIONS.c
_P = MESSAGE_SEARCH_PIECES.c


def sqlite_file_url(path: Path) -> URL:
    """The URL of the SQLite database in the file ``path``."""
    return URL.create("sqlite", database=str(path))


class SqliteBackend:
    """SQLite, through Python's sqlite3."""

    name: BackendName = "sqlite"
    serves_job_queue = False
    autocommits_one_statement = False  # every write begins IMMEDIATE, to wait for the lock up front
    refuses_nul = False
    keeps_texts = False  # the body column holds the text as imported
    writes_in_ctes = False
    analyzes_after_import = False
    walks_a_subquery = False  # a subquery of whole rows tested twice as slowly as ids from the covering index
    writes_out_of_process = False  # the library's work holds the GIL but for short steps: a thread only adds switches

    # -- connecting ----------------------------------------------------------

    def driver_url(self, url: URL) -> URL:
        return url.set(drivername="sqlite")

    def database_file(self, url: URL) -> Path | None:
        return None if url.database in (None, "", ":memory:") else Path(url.database)

    def make_engine(self, url: URL, settings: EngineSettings) -> Engine:
        if url.database in (None, "", ":memory:"):
            raise StoreError("an in-memory SQLite database cannot be shared between connections; use a file")
        _create_private(url.database)
        engine = create_engine(
            url,
            connect_args={"timeout": settings.busy_timeout_ms / 1000, "check_same_thread": False},
            json_serializer=dumps_text,
            json_deserializer=loads,
        )
        _connection_events(engine, settings)
        return engine

    @contextmanager
    def rebuilding_tables(self, conn: Connection) -> Iterator[None]:
        # Foreign keys off for the transaction, as SQLite's procedure for rebuilding a table requires
        # (dropping a parent table would cascade), and checked before it commits.
        driver = conn.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        driver.execute("PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                yield
                broken = conn.exec_driver_sql("PRAGMA foreign_key_check").first()
                if broken is not None:
                    raise StoreError(f"the migration left a row of {broken[0]} without its {broken[2]} row")
        finally:
            driver.execute("PRAGMA foreign_keys=ON")

    def integrity_check(self, conn: Connection) -> list[str] | None:
        return [str(row[0]) for row in conn.exec_driver_sql("PRAGMA quick_check")]

    def lock(self, conn: Connection, key: int) -> None:
        """Nothing to take: a write transaction holds the database's one write lock already."""

    def unbounded_statements(self, conn: Connection) -> None:
        """Nothing to lift: SQLite statements have no server-side timeout."""

    # -- statements ------------------------------------------------------------

    def insert(self, table: Table) -> sqlite_dialect.Insert:
        return sqlite_dialect.insert(table)

    def greatest(self, *values: Any) -> ColumnElement[Any]:
        return func.max(*values)  # scalar with several arguments (an aggregate with one)

    def one_of(self, column: ColumnElement[Any], values: Sequence[Any]) -> ColumnElement[bool]:
        return column.in_(values)

    def row_set(self, name: str, types: ColumnTypes, rows: Rows) -> FromClause:
        # A CTE of VALUES joined on an index: a row-value IN would scan the whole index.
        columns = [column(key, type_) for key, type_ in types.items()]
        return values(*columns, name=name).data([tuple(row[key] for key in types) for row in rows]).cte(name)

    def update_each(
        self, conn: Connection, statement: Callable[[Any], Executable], types: ColumnTypes, rows: Rows
    ) -> None:
        fields = {key: bindparam(key, type_=type_) for key, type_ in types.items()}
        update = statement(fields)
        assert isinstance(update, ClauseElement)
        if rows:
            executemany(conn, update, rows)

    def insert_new(self, conn: Connection, table: Table, rows: Rows) -> None:
        # executemany, not multi-row VALUES: the driver parses every distinct long statement.
        if rows:
            executemany(conn, sqlite_dialect.insert(table).on_conflict_do_nothing(), rows)

    def insert_conversations(self, conn: Connection, rows: Rows) -> dict[str, int]:
        # Under the write lock the new rows take the ids above the largest: indexed in a statement per table, as
        # a row at a time FTS5 flushes its pending terms at every statement (see write_messages).
        after = conn.execute(select(func.coalesce(func.max(_C.id), 0))).scalar_one()
        self.insert_new(conn, CONVERSATIONS, rows)
        for statement in _INDEX_CONVERSATIONS:
            conn.execute(statement, {"after": after})
        return {cid: pk for cid, pk in conn.execute(select(_C.conversation_id, _C.id).where(_C.id > after))}

    # -- messages --------------------------------------------------------------

    def message_ids(self, conn: Connection, n: int) -> list[int]:
        first = conn.execute(select(func.coalesce(func.max(_M.id), 0))).scalar_one() + 1
        return list(range(first, first + n))

    def write_messages(self, conn: Connection, batch: MessageBatch) -> None:
        rows, pieced = batch.rows, batch.pieced
        held = [row for row in rows if not isinstance(row["body"], SpilledBody)]
        if held:
            executemany_rows(conn, MESSAGES, held)
        for row in rows:
            if isinstance(row["body"], SpilledBody):
                _write_spilled(conn, row, row["body"])
        later = dict(pieced)
        write_grams(conn, [(row["id"], _searched(row, later)) for row in rows])
        if batch.outlines:
            executemany_rows(conn, MESSAGE_OUTLINES, batch.outlines)
        span = {"first": min(row["id"] for row in rows), "last": max(row["id"] for row in rows)}
        # The batch's terms in one statement: a row at a time, FTS5 flushes its pending terms at every statement.
        conn.execute(_INDEX_MESSAGES, span)
        if pieced:
            add = insert(MESSAGE_SEARCH_PIECES)
            for pk, pieces in pieced:  # a piece at a time, read back from its file
                for seq, piece in enumerate(pieces.later(), start=1):
                    conn.execute(add, {"message_pk": pk, "seq": seq, "text": piece})
            # Each piece its own document: FTS5 flushes its pending terms between rows, never within one.
            conn.execute(_INDEX_PIECES, span)

    def forget_messages(self, conn: Connection, rows: Sequence[int]) -> None:
        if rows:
            found = conn.execute(select(_M.id, _M.search_text).where(_M.id.in_(rows))).all()
            forget_grams(conn, [(pk, stored_pieces(conn, pk, head)) for pk, head in found])

    def exact_texts(self, conn: Connection, rows: Sequence[int]) -> dict[int, str]:
        return {}

    def read_spans(self, conn: Connection, spans: Sequence[tuple[int, int, int]]) -> list[bytes]:
        # Incremental blob I/O: only the pages that hold a range are read.
        driver = conn.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        out: list[bytes] = []
        blob: sqlite3.Blob | None = None
        blob_row = -1
        try:
            for row, start, end in spans:
                if row != blob_row:
                    if blob is not None:
                        blob.close()
                    blob, blob_row = driver.blobopen(MESSAGES.name, "body", row, readonly=True), row
                assert blob is not None
                blob.seek(start)
                out.append(blob.read(end - start))
        finally:
            if blob is not None:
                blob.close()
        return out

    # -- search ----------------------------------------------------------------

    def matching_conversations(self, needle: str) -> CompoundSelect[Any]:
        if len(needle) > MAX_GRAM:
            in_messages = select(_M.conversation_pk).where(_M.id.in_(_fts_rows("message_fts", needle, "phrase")))
            pieces = select(_P.message_pk).where(_P.id.in_(_fts_rows("search_piece_fts", needle, "piece_phrase")))
            in_pieces = select(_M.conversation_pk).where(_M.id.in_(pieces))
            # The id and title under their own trigram index (revision 0020), not a scan of every conversation.
            return union(in_messages, in_pieces, _fts_rows("conversation_fts", needle, "own_phrase"))
        gram = token(fold(needle))
        in_messages = select(_M.conversation_pk).where(_M.id.in_(_fts_rows(GRAMS_TABLE, gram, "gram")))
        return union(in_messages, _fts_rows(CONVERSATION_GRAMS_TABLE, gram, "own_gram"))

    def conversation_contains(self, needle: str, rows: FromClause) -> ColumnElement[bool]:
        # The text itself, not FTS5: a MATCH limited to one rowid still reads its trigrams' whole doclists.
        in_messages = exists().where(_M.conversation_pk == rows.c.id, _message_contains(_M.search_text, needle))
        in_pieces = exists().where(
            _M.conversation_pk == rows.c.id, _P.message_pk == _M.id, _message_contains(_P.text, needle)
        )
        own = (_own_contains(rows.c.conversation_id, needle), _own_contains(rows.c.title, needle))
        return or_(*own, in_messages, in_pieces)

    def custom_plans(self, conn: Connection) -> None:
        """Nothing to set: SQLite plans every statement it runs for its values."""

    def match_windows(self, conversation_ids: Sequence[str], needle: str, reach: int, width: int) -> Select[Any]:
        # Each piece alone (the first is the message's own column): a needle lies whole in the piece it begins in.
        wanted = select(_C.id).where(_C.conversation_id.in_(conversation_ids))
        first = select(_M.id.label("message_pk"), literal(0).label("seq"), _M.search_text.label("text")).where(
            _M.conversation_pk.in_(wanted)
        )
        more = (
            select(_P.message_pk, _P.seq, _P.text)
            .join(MESSAGES, _M.id == _P.message_pk)
            .where(_M.conversation_pk.in_(wanted))
        )
        piece = union_all(first, more).subquery()
        position = func.instr(getattr(func, LOWER_FUNCTION)(piece.c.text), needle.lower())  # lower(): ASCII only
        start = case((position > reach, position - reach), else_=1)
        return (
            select(
                _C.conversation_id,
                piece.c.seq * PIECE_STRIDE + position,
                piece.c.seq * PIECE_STRIDE + start,
                func.substr(piece.c.text, start, width),
            )
            .select_from(piece)
            .join(MESSAGES, _M.id == piece.c.message_pk)
            .join(CONVERSATIONS, _C.id == _M.conversation_pk)
            .where(position > 0)
            .order_by(piece.c.message_pk, piece.c.seq)
        )


SQLITE = SqliteBackend()


def _write_spilled(conn: Connection, row: dict[str, Any], body: SpilledBody) -> None:
    """Insert a message row whose text is in a file: a zeroblob of its length, filled a piece at a time through
    incremental blob I/O (https://sqlite.org/c3ref/blob_open.html), so no layer holds the text whole.

    The text is then stored as a BLOB of its UTF-8 bytes, which a reader of the whole body gets back as the text:
    cast to TEXT, or parsed as JSON (which reads UTF-8 bytes); the outlines' spans read bytes of any body."""
    conn.execute(insert(MESSAGES).values({**row, "body": func.zeroblob(len(body))}))
    driver = conn.connection.driver_connection
    assert isinstance(driver, sqlite3.Connection)
    with driver.blobopen(MESSAGES.name, "body", row["id"]) as blob:
        for piece in body.pieces():
            blob.write(piece)


def _searched(row: dict[str, Any], later: dict[int, SearchPieces]) -> str | Iterable[str]:
    """A message row's searchable text: its column, or its pieces when it has more than one."""
    pieces = later.get(row["id"])
    return row["search_text"] if pieces is None else pieces.after(row["search_text"])


def _fts_rows(table: str, needle: str, name: str) -> Select[Any]:
    """The rowids of an FTS5 trigram ``table`` holding ``needle`` (quoted as one FTS5 string: its syntax is literal)."""
    phrase = '"' + needle.replace('"', '""') + '"'
    match = text(f"{table} MATCH :{name}").bindparams(**{name: phrase})  # table and name: constants of this module
    return select(literal_column(f"{table}.rowid")).select_from(text(table)).where(match)


def _message_contains(text: ColumnElement[str], needle: str) -> ColumnElement[bool]:
    """A searchable text (a message's first piece, or a later one) holds ``needle``: a scan's test."""
    if needle.isascii():
        return text.like(contains_pattern(needle), escape="\\")
    # LIKE folds ASCII letters only: fold both sides in Python
    return func.instr(_folded(text, needle), fold(needle)) > 0


def _folded(column: ColumnElement[str], needle: str) -> ColumnElement[str]:
    """``column`` as far folded as a search for ``needle`` needs: not at all when nothing in it has a case."""
    return column if caseless(needle) else getattr(func, LOWER_FUNCTION)(column)


def _lower(value: object) -> object:
    return fold(value) if isinstance(value, str) else value


def _grams(value: object) -> object:
    return tokens(value) if isinstance(value, str) else value


def _create_private(path: str) -> None:
    """Create an empty database file with mode 0600 unless it exists (an existing file keeps its mode)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE))
    except FileExistsError:
        pass
    except OSError:
        pass  # a directory that does not exist, no permission: SQLite's own error says it on connect


def _connection_events(engine: Engine, settings: EngineSettings) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Autocommit at the driver level: SQLAlchemy's "begin" event below issues BEGIN itself.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={int(settings.busy_timeout_ms)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()
        dbapi_connection.create_function(LOWER_FUNCTION, 1, _lower, deterministic=True)
        dbapi_connection.create_function(GRAMS_FUNCTION, 1, _grams, deterministic=True)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        dbapi_connection = conn.connection.driver_connection
        assert dbapi_connection is not None
        if not conn.get_execution_options().get(WRITE_OPTION):
            dbapi_connection.execute("BEGIN")
            return
        deadline = time.monotonic() + settings.write_wait_ms / 1000
        while True:
            try:
                dbapi_connection.execute("BEGIN IMMEDIATE")  # waits up to busy_timeout for the lock
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc):
                    raise
                if time.monotonic() >= deadline:
                    waited = (settings.busy_timeout_ms + settings.write_wait_ms) / 1000
                    raise StoreError(f"database is locked: another writer held it for over {waited:g} s") from None
                log.info("still waiting for the SQLite write lock (%s)", exc)


def _own_contains(column: ColumnElement[str], needle: str) -> ColumnElement[bool]:
    """A conversation's id or title ``column`` contains ``needle``, case-folded as the message search."""
    if needle.isascii():  # LIKE folds ASCII letters
        return column.like(contains_pattern(needle), escape="\\")
    return func.instr(_folded(column, needle), fold(needle)) > 0
