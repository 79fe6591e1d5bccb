"""Migrations and connection settings: automatic first upgrade, SQLite pragmas and IMMEDIATE writes."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, insert, text

from core.store import EngineSettings, SchemaOutOfDate, Store, StoreError, head_revision, make_engine, resolve_url
from core.store.engine import read_transaction, write_transaction
from core.store.tables import CONVERSATIONS, METADATA
from tests.store.store_pg import BACKENDS
from web.cli import main

REAL_MIGRATIONS = True  # the first upgrade of an empty file is what these tests pin (tests.migrated_template)


def in_the_models(obj: object, name: str | None, type_: str, reflected: bool, compare_to: object) -> bool:
    """What the SQLModel classes describe: not the backend-specific search indexes, nor the queue's tables."""
    # Procrastinate's tables are the job queue's schema on PostgreSQL, applied beside the migrations.
    return not (name or "").startswith(
        (
            "message_fts",
            "message_grams",
            "search_piece_fts",
            "conversation_fts",
            "conversation_grams",
            "search_chunks",
            "ix_search_",
            "procrastinate_",
        )
    )


DERIVED_WITHOUT_KEYS = {
    ("message_outlines", "messages"),
    ("message_texts", "messages"),
    ("message_search_pieces", "messages"),
    ("conversation_kinds", "conversations"),
}
"""PostgreSQL: the models' foreign keys that a trigger replaces (revision 0034, ``test_store_cascade``)."""


def differences_from_the_models(conn: Connection) -> list[Any]:
    """How the migrated schema differs from the models (``compare_metadata``), less the keys PostgreSQL's triggers
    replace, which must be absent there."""
    context = MigrationContext.configure(conn, opts={"include_object": in_the_models})
    replaced = DERIVED_WITHOUT_KEYS if conn.dialect.name == "postgresql" else set()
    diffs = compare_metadata(context, METADATA)
    keys = [d for d in diffs if d[0] == "add_fk" and (d[1].parent.name, d[1].referred_table.name) in replaced]
    assert len(keys) == len(replaced)
    return [d for d in diffs if d not in keys]


@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_first_use_of_an_empty_database_creates_the_schema(fresh_url: str) -> None:
    with Store.open(fresh_url) as store:
        assert store.counts() == {
            "conversations": 0,
            "messages": 0,
            "conversation_kinds": 0,
            "runs": 0,
            "step_runs": 0,
        }
        with store.engine.connect() as conn:
            assert MigrationContext.configure(conn).get_current_revision() == head_revision()
            # The migrations build exactly the tables the SQLModel classes describe.
            # (Search indexes are backend-specific and not in the metadata: FTS5 tables, the trigram index.)
            assert differences_from_the_models(conn) == []


@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_a_schema_from_another_version_is_not_touched_silently(
    fresh_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Store.open(fresh_url).close()
    engine = make_engine(resolve_url(fresh_url))
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0000'"))
    engine.dispose()
    with pytest.raises(SchemaOutOfDate, match="traceloupe db upgrade"):
        Store.open(fresh_url)
    assert main(["conversations", "--db", fresh_url]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "db upgrade" in err and "Traceback" not in err


def test_sqlite_connection_settings(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "s.db")) as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 5000
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL


def test_sqlite_writers_queue_instead_of_failing(tmp_path: Path) -> None:
    """Two read-then-write transactions at once: DEFERRED would fail at once with "database is locked"
    (t8y2/dbx PR #6990); BEGIN IMMEDIATE makes the second wait for the first and then succeed."""
    store = Store.open(str(tmp_path / "w.db"))
    errors: list[BaseException] = []
    inside = threading.Event()

    def writer(name: str, hold: float) -> None:
        try:
            with write_transaction(store.engine) as conn:
                inside.set()
                conn.execute(text("SELECT count(*) FROM conversations")).scalar()
                time.sleep(hold)
                conn.execute(insert(CONVERSATIONS).values(conversation_id=name))
        except BaseException as exc:
            errors.append(exc)

    first = threading.Thread(target=writer, args=("first", 0.5))
    first.start()
    inside.wait()
    second = threading.Thread(target=writer, args=("second", 0))
    second.start()
    # A reader is never blocked by the writer (WAL).
    with read_transaction(store.engine) as conn:
        assert conn.execute(text("SELECT count(*) FROM conversations")).scalar() == 0
    first.join()
    second.join()
    assert errors == []
    with read_transaction(store.engine) as conn:
        assert conn.execute(text("SELECT count(*) FROM conversations")).scalar() == 2
    store.close()


def test_database_url_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACELOUPE_DATABASE_URL", raising=False)
    assert resolve_url(None, cwd=tmp_path).database == str(tmp_path / "traceloupe.db")
    monkeypatch.setenv("TRACELOUPE_DATABASE_URL", "postgres://u@h/db")
    assert resolve_url(None).render_as_string() == "postgresql+psycopg://u@h/db"
    assert resolve_url("other.db").database == str(Path("other.db").resolve())
    with pytest.raises(Exception, match="unsupported database 'mysql'"):
        resolve_url("mysql://u@h/db")


@pytest.mark.parametrize("write_wait_ms", [10_000, 0])
def test_sqlite_writer_outwaits_a_long_import(tmp_path: Path, write_wait_ms: int) -> None:
    """A lock held past the busy timeout (a big import) makes another writer wait, not fail;
    with no extra wait the same writer fails, which is what the retry is for."""
    url = str(tmp_path / "long.db")
    Store.open(url).close()
    holder = make_engine(resolve_url(url))
    settings = EngineSettings(busy_timeout_ms=100, write_wait_ms=write_wait_ms)
    waiter = make_engine(resolve_url(url), settings)
    inside = threading.Event()

    def hold() -> None:
        with write_transaction(holder) as conn:
            conn.execute(insert(CONVERSATIONS).values(conversation_id="import"))
            inside.set()
            time.sleep(0.8)

    thread = threading.Thread(target=hold)
    thread.start()
    inside.wait()
    try:
        if write_wait_ms:
            with write_transaction(waiter) as conn:
                conn.execute(insert(CONVERSATIONS).values(conversation_id="run"))
        else:
            with pytest.raises(StoreError, match="database is locked"), write_transaction(waiter) as conn:
                conn.execute(insert(CONVERSATIONS).values(conversation_id="run"))
    finally:
        thread.join()
    with read_transaction(holder) as conn:
        assert conn.execute(text("SELECT count(*) FROM conversations")).scalar() == (2 if write_wait_ms else 1)
    holder.dispose()
    waiter.dispose()


def test_long_write_transactions_are_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    engine = make_engine(resolve_url(str(tmp_path / "slow.db")), EngineSettings(slow_write_ms=50))
    with caplog.at_level("INFO", logger="traceloupe.store"):
        with write_transaction(engine):
            time.sleep(0.1)
        with write_transaction(engine, label="the import of big.jsonl"):
            time.sleep(0.1)
    assert [(r.levelname, r.getMessage().split(" held ")[0]) for r in caplog.records] == [
        ("WARNING", "a write transaction"),
        ("INFO", "the import of big.jsonl"),
    ]
    engine.dispose()
