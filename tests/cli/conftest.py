"""The store's fixtures, for the commands that read and write a database (each runs on SQLite and PostgreSQL);
and the replay tests' stub provider and stored conversations, for ``replay`` and ``runs``."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.store import Store
from tests.replay.conftest import replay_store, stub_env
from tests.replay.steps_data import seed_steps
from tests.store.conftest import db_url, fresh_url, pg_session_url, store

__all__ = [
    "cli_env",
    "db_url",
    "fresh_url",
    "pg_session_url",
    "replay_db",
    "replay_store",
    "steps_db",
    "store",
    "stub_env",
]


@pytest.fixture
def cli_env(stub_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every provider's key and base URL (the stub's) in this process's environment, where a command reads them."""
    for name, value in stub_env.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def replay_db(replay_store: Store, tmp_path: Path) -> str:
    """The ``--db`` of the replay conversation's store (``replay_store``, open in the test too)."""
    return str(tmp_path / "replay.db")


@pytest.fixture
def steps_db(tmp_path: Path) -> str:
    """The ``--db`` of a store holding the step-replay conversations."""
    db = str(tmp_path / "steps.db")
    with Store.open(db) as store:
        seed_steps(store, tmp_path)
    return db
