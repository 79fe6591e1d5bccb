"""The store's fixtures, for the commands that read and write a database (each runs on SQLite and PostgreSQL),
and a root logger put back after each test."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tests.store.conftest import db_url, pg_session_url, store

__all__ = ["db_url", "pg_session_url", "restore_root_logger", "store"]


@pytest.fixture(autouse=True)
def restore_root_logger() -> Iterator[None]:
    """``serve`` and ``demo`` build the app in-process, and Litestar then sets the root logger's handlers on the
    stderr pytest captured for that test; a later test would get that closed stream's logging errors."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
