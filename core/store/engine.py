"""Where the database is and how to talk to it: URL resolution, engines, and the transactions reads and writes run in.

What each backend does differently (connection settings, how a transaction begins) is the backend's
(``core.store.backend``): SQLite begins every write transaction IMMEDIATE, PostgreSQL runs a lone
statement in autocommit.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TypeVar
from weakref import WeakKeyDictionary

from sqlalchemy import Connection, Engine
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError

from core.store.backend import backend_for_url, backend_of, sqlite_file_url
from core.store.backend.base import WRITE_OPTION
from core.store.errors import StoreError
from core.store.pool import PING_AFTER_IDLE_SECONDS as PING_AFTER_IDLE_SECONDS
from core.store.pool import ping_when_idle as ping_when_idle
from core.store.settings import DEFAULT_SETTINGS as DEFAULT_SETTINGS
from core.store.settings import EngineSettings as EngineSettings

log = logging.getLogger("traceloupe.store")

ENV_VAR = "TRACELOUPE_DATABASE_URL"
DEFAULT_SQLITE_FILE = "traceloupe.db"

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
        return sqlite_file_url(Path(raw).expanduser().resolve())
    if raw.startswith("postgres://"):
        raw = "postgresql://" + raw[len("postgres://") :]
    try:
        url = make_url(raw)
    except ArgumentError as exc:
        raise StoreError(f"not a database URL: {raw!r} ({exc})") from None
    return backend_for_url(url).driver_url(url)


def make_engine(url: URL | str, settings: EngineSettings = DEFAULT_SETTINGS) -> Engine:
    """An engine for ``url`` with the settings above applied on every connection."""
    url = resolve_url(url) if isinstance(url, str) else url
    engine = backend_for_url(url).make_engine(url, settings)
    _SETTINGS[engine] = settings
    return engine


@contextmanager
def write_transaction(
    engine: Engine, *, label: str | None = None, rebuilds_tables: bool = False
) -> Iterator[Connection]:
    """A connection in a write transaction: committed on success, rolled back on any error.

    On SQLite the transaction is begun IMMEDIATE, so the write lock is taken (or waited
    for) before the first statement rather than failing halfway through. A ``label``
    marks a transaction that is expected to be long (an import): logged as info.

    ``rebuilds_tables`` (a migration): the transaction lets the migration drop and rebuild tables
    (on SQLite foreign keys are off for it, and checked before it commits).
    """
    slow_ms = _SETTINGS.get(engine, DEFAULT_SETTINGS).slow_write_ms
    with engine.connect() as conn:
        conn.execution_options(**{WRITE_OPTION: True})
        with backend_of(conn).rebuilding_tables(conn) if rebuilds_tables else conn.begin():
            started = time.monotonic()
            yield conn
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
    with _autocommit_where_atomic(engine, write_transaction) as conn:
        yield conn


@contextmanager
def one_statement_read(engine: Engine) -> Iterator[Connection]:
    """A connection for a read that is one statement (or whose statements need no common snapshot):
    in autocommit on PostgreSQL, as :func:`one_statement_write` says; a :func:`read_transaction` on SQLite."""
    with _autocommit_where_atomic(engine, read_transaction) as conn:
        yield conn


@contextmanager
def _autocommit_where_atomic(
    engine: Engine, otherwise: Callable[[Engine], AbstractContextManager[Connection]]
) -> Iterator[Connection]:
    if not backend_of(engine).autocommits_one_statement:
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
