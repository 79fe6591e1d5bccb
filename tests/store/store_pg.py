"""The PostgreSQL test server: fresh databases per session or per test, loud under CI when it is missing.

A migrated database is a copy (``CREATE DATABASE ... TEMPLATE``) of one this process migrated on first need,
as ``tests.migrated_template`` does for SQLite; a module with ``REAL_MIGRATIONS = True`` migrates each one.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from core.store import Store
from core.store.engine import resolve_url

PG_BASE_URL = os.environ.get("TRACELOUPE_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
]


def _admin_connect() -> Any:
    import psycopg

    url = resolve_url(PG_BASE_URL)
    return psycopg.connect(
        host=url.host,
        port=url.port or 5432,
        user=url.username,
        password=url.password,
        dbname=url.database,
        autocommit=True,
        connect_timeout=3,
    )


def pg_database_url(name: str) -> str:
    """The URL of database ``name`` on the test server."""
    return resolve_url(PG_BASE_URL).set(database=name).render_as_string(hide_password=False)


def create_pg_database(template: str | None = None) -> str:
    """A fresh database on the test server, empty or a copy of ``template``; returns its name. Fails or skips when
    there is no server."""
    import psycopg

    try:
        conn = _admin_connect()
    except psycopg.OperationalError as exc:
        reason = f"PostgreSQL at {PG_BASE_URL} is not reachable: {str(exc).strip().splitlines()[0]}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(reason)
    name = f"tl_test_{uuid.uuid4().hex[:12]}"
    with conn:
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    return name


def drop_pg_database(name: str) -> None:
    """Drop a database made by ``create_pg_database`` (its connections are terminated first)."""
    with _admin_connect() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# A DROP DATABASE waits for a checkpoint; the next test need not, so a test's database is dropped on this thread.
_dropper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pg-drop")
_drops: list[Future[None]] = []


def drop_later(name: str) -> None:
    """Drop database ``name`` on the dropping thread (``drop_migrated_template`` waits for every drop)."""
    _drops.append(_dropper.submit(drop_pg_database, name))


_template_lock = threading.Lock()
_template: list[str] = []  # the migrated database this process copies, once made


def _migrated_template() -> str:
    """The name of this process's migrated database (made by the real migrations on first call)."""
    with _template_lock:
        if not _template:
            name = create_pg_database()
            Store.open(pg_database_url(name)).close()  # the engine is disposed: no session left on the template
            _template.append(name)
        return _template[0]


def drop_migrated_template() -> None:
    """Wait for the databases dropped later, then drop this process's migrated database, if it made one (at the end
    of the test session)."""
    _dropper.shutdown(wait=True)
    for drop in _drops:
        drop.result()  # a drop that failed fails loudly here
    with _template_lock:
        while _template:
            drop_pg_database(_template.pop())


def _real_migrations_asked() -> bool:
    from core.store import schema
    from tests.migrated_template import REAL_UPGRADE

    return schema.upgrade is REAL_UPGRADE


@contextmanager
def pg_database(*, migrated: bool = True) -> Iterator[str]:
    """The URL of a fresh database on the test server (with Traceloupe's schema unless not ``migrated``),
    dropped on exit."""
    copy = migrated and not _real_migrations_asked()
    name = create_pg_database(_migrated_template() if copy else None)
    try:
        url = pg_database_url(name)
        if migrated and not copy:
            Store.open(url).close()
        yield url
    finally:
        drop_later(name)


@contextmanager
def empty_store_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A migrated, empty store's URL on ``backend``: a SQLite file in ``tmp_path``, or a database of its own on the
    PostgreSQL test server (dropped on exit)."""
    if backend == "sqlite":
        url = str(tmp_path / "store.db")
        Store.open(url).close()
        yield url
        return
    with pg_database() as url:
        yield url
