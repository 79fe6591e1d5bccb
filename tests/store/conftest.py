"""Store fixtures: every store test runs on SQLite and on PostgreSQL.

PostgreSQL is the server at 127.0.0.1:5432 (``$TRACELOUPE_TEST_PG_URL`` overrides
it). Each test session creates its own database and drops it at the end, so
parallel sessions (``pytest -n 2``) never see each other's rows. Without a
server the PostgreSQL cases skip with the reason, except under ``CI=true``,
where a missing server is a failure: CI must not go green by skipping.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from core.store import Store
from core.store.engine import make_engine, resolve_url

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


@pytest.fixture(scope="session")
def pg_session_url() -> Iterator[str]:
    """One migrated database for this test session."""
    name = create_pg_database()
    url = pg_database_url(name)
    Store.open(url).close()
    try:
        yield url
    finally:
        drop_pg_database(name)


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty, migrated store's URL on each backend."""
    if request.param == "sqlite":
        url = str(tmp_path / "store.db")
        Store.open(url).close()
        yield url
        return
    url = request.getfixturevalue("pg_session_url")
    engine = make_engine(resolve_url(url))
    with engine.begin() as conn:
        conn.execute(text("TRUNCATE conversations, messages, conversation_kinds, runs RESTART IDENTITY CASCADE"))
    engine.dispose()
    yield url


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """An open, empty store on each backend."""
    with Store.open(db_url) as opened:
        yield opened


@pytest.fixture
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL of a database Traceloupe never touched (no schema), on the backend of ``request.param``."""
    if request.param == "sqlite":
        yield str(tmp_path / "fresh.db")
        return
    name = create_pg_database()
    try:
        yield pg_database_url(name)
    finally:
        drop_pg_database(name)
