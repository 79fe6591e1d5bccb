"""Store fixtures: every store test runs on SQLite and on PostgreSQL.

PostgreSQL is the server at 127.0.0.1:5432 (``$TRACELOUPE_TEST_PG_URL`` overrides
it). Each test session creates its own database and drops it at the end, so
parallel sessions (``pytest -n 2``) never see each other's rows. Without a
server the PostgreSQL cases skip with the reason, except under ``CI=true``,
where a missing server is a failure: CI must not go green by skipping.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store import Store
from core.store.engine import make_engine, resolve_url
from tests.store.pg_emptying import Emptying
from tests.store.store_pg import BACKENDS, empty_store_url, pg_database

_emptying: dict[str, Emptying] = {}  # by the session database's URL


@pytest.fixture(scope="session")
def pg_session_url() -> Iterator[str]:
    """One migrated database for this test session."""
    with pg_database() as url:
        yield url


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty, migrated store's URL on each backend (on PostgreSQL, the session's database emptied:
    ``tests.store.pg_emptying``)."""
    if request.param == "sqlite":
        with empty_store_url("sqlite", tmp_path) as url:
            yield url
        return
    url = request.getfixturevalue("pg_session_url")
    engine = make_engine(resolve_url(url))
    with engine.begin() as conn:
        emptying = _emptying.get(url) or _emptying.setdefault(url, Emptying.read(conn))
        emptying.empty(conn)
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
    with pg_database(migrated=False) as url:
        yield url
