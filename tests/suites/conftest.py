"""Suite fixtures: a store on each backend (a fresh PostgreSQL database per test), the stub provider and its env."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store import Store
from tests.replay.conftest import CANARY_KEY
from tests.store.store_pg import BACKENDS, pg_database
from web.devtools.stub_provider import StubServer


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated, empty store's URL: a SQLite file, or a database of its own on the PostgreSQL test server."""
    if request.param == "sqlite":
        url = str(tmp_path / "suites.db")
        Store.open(url).close()
        yield url
        return
    with pg_database() as url:
        yield url


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store.open(db_url) as opened:
        yield opened


@pytest.fixture
def stub_env(stub: StubServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """OpenAI's key and base URL pointed at the stub, in this process's environment too (the CLI reads it)."""
    env = {"OPENAI_API_KEY": CANARY_KEY, "OPENAI_BASE_URL": f"{stub.base_url}/v1"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env
