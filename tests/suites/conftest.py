"""Suite fixtures: a store on each backend (a fresh PostgreSQL database per test), the stub provider and its env."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.replay.conftest import CANARY_KEY
from tests.store.conftest import store  # noqa: F401 - the open store on this folder's db_url
from tests.store.store_pg import BACKENDS, empty_store_url
from web.devtools.stub_provider import StubServer


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated, empty store's URL: a SQLite file, or a database of its own on the PostgreSQL test server."""
    with empty_store_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def stub_env(stub: StubServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """OpenAI's key and base URL pointed at the stub, in this process's environment too (the CLI reads it)."""
    env = {"OPENAI_API_KEY": CANARY_KEY, "OPENAI_BASE_URL": f"{stub.base_url}/v1"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env
