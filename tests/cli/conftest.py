"""The store's fixtures, for the commands that read and write a database (each runs on SQLite and PostgreSQL);
the replay tests' stub provider and stored conversations, for ``replay`` and ``runs``; and a root logger put
back after each test."""

from __future__ import annotations

import logging
from collections.abc import Iterator
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
    "restore_root_logger",
    "steps_db",
    "store",
    "stub_env",
]


@pytest.fixture(autouse=True)
def restore_root_logger() -> Iterator[None]:
    """``serve`` and ``demo`` build the app in-process, and Litestar then sets the root logger's handlers on the
    stderr pytest captured for that test; a later test would get that closed stream's logging errors."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


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
