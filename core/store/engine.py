"""Where the database is and how to talk to it: URL resolution and per-backend connection settings.

SQLite (the default, one file in the working directory) runs in WAL mode with a
busy timeout, foreign keys on and ``synchronous=NORMAL``. Python's sqlite3 begins
transactions lazily and DEFERRED, and a deferred transaction that later writes
fails at once with "database is locked" whatever the busy timeout (the bug
t8y2/dbx PR #6990 fixed); so the driver's own transaction handling is switched
off and every transaction is begun here: ``BEGIN IMMEDIATE`` on a write
connection (it waits for the lock up front, within the busy timeout), plain
``BEGIN`` on a read connection (WAL readers never block).

PostgreSQL goes through psycopg 3; JSON columns are JSONB.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar
from weakref import WeakKeyDictionary

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DisconnectionError, IntegrityError

from core.jsonio import loads
from core.store.casefold import fold
from core.store.errors import StoreError
from core.store.jsonio import dumps_text

log = logging.getLogger("traceloupe.store")

ENV_VAR = "TRACELOUPE_DATABASE_URL"
DEFAULT_SQLITE_FILE = "traceloupe.db"
Backend = Literal["sqlite", "postgresql"]

_WRITE_OPTION = "traceloupe_write"


@dataclass(frozen=True, slots=True)
class EngineSettings:
    """Connection settings with their defaults; the busy timeout bounds how long a writer waits for the lock."""

    busy_timeout_ms: int = 5_000
    write_wait_ms: int = 120_000
    """SQLite only: how long a writer keeps retrying for the lock past the busy timeout.

    Imports hold the lock for their whole write (a 100,000-message file: about ten
    seconds), longer than the busy timeout; a run being recorded meanwhile waits for it
    instead of failing with "database is locked". Retrying is safe: nothing was written.
    """
    slow_write_ms: int = 2_000
    """A write transaction that holds the lock longer is logged (``traceloupe.store``), to find lock holders."""
    statement_timeout_ms: int = 30_000
    """PostgreSQL only: a search or list query that runs longer is cancelled instead of holding a worker."""
    pool_size: int = 16
    """PostgreSQL only: connections a process keeps open; past them a thread waits for one to be returned.

    Not opened and closed on demand: under load that churned a new server process per request or so,
    a third of a core for PostgreSQL alone. Sixteen per process leave room for several processes and
    workers within PostgreSQL's default of 100."""


DEFAULT_SETTINGS = EngineSettings()
_SETTINGS: WeakKeyDictionary[Engine, EngineSettings] = WeakKeyDictionary()


def resolve_url(explicit: str | None = None, *, cwd: Path | None = None) -> URL:
    """The database URL: ``explicit`` (``--db``), else ``$TRACELOUPE_DATABASE_URL``, else ``./traceloupe.db``.

    A value without ``://`` is a SQLite file path. ``postgres://`` and ``postgresql://``
    select the psycopg 3 driver.
    """
    raw = explicit or os.environ.get(ENV_VAR) or ""
    if not raw:
        raw = str((cwd or Path.cwd()) / DEFAULT_SQLITE_FILE)
    if "://" not in raw:
        return URL.create("sqlite", database=str(Path(raw).expanduser().resolve()))
    if raw.startswith("postgres://"):
        raw = "postgresql://" + raw[len("postgres://") :]
    try:
        url = make_url(raw)
    except ArgumentError as exc:
        raise StoreError(f"not a database URL: {raw!r} ({exc})") from None
    backend = url.get_backend_name()
    if backend == "postgresql":
        return url.set(drivername="postgresql+psycopg")
    if backend == "sqlite":
        return url.set(drivername="sqlite")
    raise StoreError(f"unsupported database {backend!r}: use a SQLite file or a postgresql:// URL")


def backend_of(engine: Engine) -> Backend:
    """Which of the two supported backends an engine talks to."""
    name = engine.dialect.name
    if name == "sqlite":
        return "sqlite"
    if name == "postgresql":
        return "postgresql"
    raise StoreError(f"unsupported database {name!r}")


def make_engine(url: URL | str, settings: EngineSettings = DEFAULT_SETTINGS) -> Engine:
    """An engine for ``url`` with the settings above applied on every connection."""
    url = resolve_url(url) if isinstance(url, str) else url
    if url.get_backend_name() == "sqlite":
        if url.database in (None, "", ":memory:"):
            raise StoreError("an in-memory SQLite database cannot be shared between connections; use a file")
        _create_private(url.database)
        engine = create_engine(
            url,
            connect_args={"timeout": settings.busy_timeout_ms / 1000, "check_same_thread": False},
            json_serializer=dumps_text,
            json_deserializer=loads,
        )
        _sqlite_events(engine, settings)
        _SETTINGS[engine] = settings
        return engine
    engine = create_engine(
        url,
        json_serializer=dumps_text,
        json_deserializer=loads,
        connect_args={"options": f"-c statement_timeout={settings.statement_timeout_ms}"},
        pool_size=settings.pool_size,
        max_overflow=0,
    )
    ping_when_idle(engine)
    _SETTINGS[engine] = settings
    return engine


PING_AFTER_IDLE_SECONDS = 10.0
"""A pooled PostgreSQL connection idle this long is checked before use: servers and firewalls drop idle
connections. Checking at every checkout (``pool_pre_ping``) would cost a round trip per transaction."""
_RETURNED = "traceloupe_returned_at"


def ping_when_idle(engine: Engine, idle_seconds: float = PING_AFTER_IDLE_SECONDS) -> None:
    """Check a pooled connection before use when it sat idle ``idle_seconds`` or more; a dead one is replaced.

    One returned moments ago is used as it is: if the server restarted meanwhile, that one statement fails.
    """

    @event.listens_for(engine, "checkin")
    def _returned(_dbapi_connection: Any, record: Any) -> None:
        record.info[_RETURNED] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        returned = record.info.get(_RETURNED)  # None: connected just now
        if returned is None or time.monotonic() - returned < idle_seconds:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:  # the pool replaces it with a new connection
            raise DisconnectionError(f"a pooled connection idle for {idle_seconds:g} s or more is gone") from exc


LOWER_FUNCTION = "traceloupe_lower"
"""SQLite: search's case fold (``core.store.casefold``) as an SQL function. SQLite's own ``lower()`` and
``LIKE`` fold ASCII letters only, so ``é`` would not find "École"; PostgreSQL's chunks fold every letter."""


def _lower(value: object) -> object:
    return fold(value) if isinstance(value, str) else value


PRIVATE_FILE_MODE = 0o600
"""A new SQLite database file is readable by its owner only (traces hold whatever the agent saw);
SQLite gives its -wal and -shm files the database file's mode."""


def _create_private(path: str) -> None:
    """Create an empty database file with mode 0600 unless it exists (an existing file keeps its mode)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE))
    except FileExistsError:
        pass
    except OSError:
        pass  # a directory that does not exist, no permission: SQLite's own error says it on connect


def _sqlite_events(engine: Engine, settings: EngineSettings) -> None:
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

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        dbapi_connection = conn.connection.driver_connection
        assert dbapi_connection is not None
        if not conn.get_execution_options().get(_WRITE_OPTION):
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


@contextmanager
def write_transaction(
    engine: Engine, *, label: str | None = None, rebuilds_tables: bool = False
) -> Iterator[Connection]:
    """A connection in a write transaction: committed on success, rolled back on any error.

    On SQLite the transaction is begun IMMEDIATE, so the write lock is taken (or waited
    for) before the first statement rather than failing halfway through. A ``label``
    marks a transaction that is expected to be long (an import): logged as info.

    ``rebuilds_tables`` (a migration): on SQLite foreign keys are off for the transaction, as
    SQLite's procedure for rebuilding a table requires (dropping a parent table would cascade),
    and checked before it commits.
    """
    slow_ms = _SETTINGS.get(engine, DEFAULT_SETTINGS).slow_write_ms
    with engine.connect() as conn:
        conn.execution_options(**{_WRITE_OPTION: True})
        sqlite_rebuild = rebuilds_tables and conn.dialect.name == "sqlite"
        if sqlite_rebuild:
            conn.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
        try:
            with conn.begin():
                started = time.monotonic()
                yield conn
                if sqlite_rebuild:
                    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").first()
                    if broken is not None:
                        raise StoreError(f"the migration left a row of {broken[0]} without its {broken[2]} row")
        finally:
            if sqlite_rebuild:
                conn.connection.driver_connection.execute("PRAGMA foreign_keys=ON")  # type: ignore[union-attr]
        held_ms = (time.monotonic() - started) * 1000
        if held_ms > slow_ms:
            # An import is long on purpose (info); anything else holding the lock that long is worth a warning.
            level = logging.INFO if label is not None else logging.WARNING
            log.log(level, "%s held the write lock for %.1f s", label or "a write transaction", held_ms / 1000)


@contextmanager
def one_statement_write(engine: Engine) -> Iterator[Connection]:
    """A connection for a write that is one statement, committed as it runs.

    On PostgreSQL the statement runs in autocommit: alone, it is atomic already, and a BEGIN and a
    COMMIT around it would be two round trips more. On SQLite it is a :func:`write_transaction`,
    which takes the write lock the same way as every other write. Only for callers whose write is
    always one statement: a second one would commit on its own.
    """
    with _autocommit_on_postgresql(engine, write_transaction) as conn:
        yield conn


@contextmanager
def one_statement_read(engine: Engine) -> Iterator[Connection]:
    """A connection for a read that is one statement (or whose statements need no common snapshot):
    in autocommit on PostgreSQL, as :func:`one_statement_write` says; a :func:`read_transaction` on SQLite."""
    with _autocommit_on_postgresql(engine, read_transaction) as conn:
        yield conn


@contextmanager
def _autocommit_on_postgresql(
    engine: Engine, otherwise: Callable[[Engine], AbstractContextManager[Connection]]
) -> Iterator[Connection]:
    if engine.dialect.name != "postgresql":
        with otherwise(engine) as conn:
            yield conn
        return
    with engine.connect() as conn:
        yield conn.execution_options(isolation_level="AUTOCOMMIT")


@contextmanager
def read_transaction(engine: Engine) -> Iterator[Connection]:
    """A connection in a read transaction: one consistent snapshot for everything read inside it."""
    with engine.connect() as conn, conn.begin():
        yield conn


_Claimed = TypeVar("_Claimed")


def claim_by_key(
    engine: Engine,
    claim: Callable[[Connection], tuple[_Claimed, bool]],
    idempotency_key: str | None,
    by_key: Callable[[Connection, str], _Claimed | None],
    *,
    writing: Callable[[Engine], AbstractContextManager[Connection]] = write_transaction,
) -> tuple[_Claimed, bool]:
    """``claim`` (which records a row, or finds the one its key already names) in a write transaction.

    The key column is unique, so two concurrent claims cannot both insert: on PostgreSQL the loser's
    INSERT fails on the constraint, and it gets the winner's row (``by_key``) and False. ``writing``:
    :func:`one_statement_write` for a claim whose write is one statement.
    """
    try:
        with writing(engine) as conn:
            return claim(conn)
    except IntegrityError:
        if idempotency_key is None:
            raise
        with read_transaction(engine) as conn:
            existing = by_key(conn, idempotency_key)
        if existing is None:
            raise
        return existing, False
