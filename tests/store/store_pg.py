"""The PostgreSQL test server: fresh databases per session or per test, loud under CI when it is missing."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
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


def create_pg_database() -> str:
    """A fresh, empty database on the test server; returns its name. Fails or skips when there is no server."""
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
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


def drop_pg_database(name: str) -> None:
    """Drop a database made by ``create_pg_database`` (its connections are terminated first)."""
    with _admin_connect() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def pg_database(*, migrated: bool = True) -> Iterator[str]:
    """The URL of a fresh database on the test server (with Traceloupe's schema unless not ``migrated``),
    dropped on exit."""
    name = create_pg_database()
    try:
        url = pg_database_url(name)
        if migrated:
            Store.open(url).close()
        yield url
    finally:
        drop_pg_database(name)


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
