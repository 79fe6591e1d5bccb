"""The database a store runs on: every difference between SQLite and PostgreSQL, behind one object.

The store's modules write their SQL once and ask the backend for what differs: how an engine connects
and begins its transactions, how text is searched and snippets cut, how rows go in bulk, where a
message's exact text is kept. The backend is chosen from the URL when an engine is made, and found
again from any engine or connection (``backend_of``); ``Store.db`` is the store's. Nothing outside
this package asks which database it runs on (``tests/test_architecture.py``).
"""

from __future__ import annotations

from sqlalchemy import Connection, Engine
from sqlalchemy.engine import URL

from core.store.backend.base import Backend, BackendName
from core.store.backend.postgres import POSTGRES
from core.store.backend.sqlite import SQLITE, sqlite_file_url
from core.store.errors import StoreError

_BACKENDS: dict[str, Backend] = {SQLITE.name: SQLITE, POSTGRES.name: POSTGRES}


def backend_named(name: str) -> Backend:
    """The backend SQLAlchemy calls ``name``; StoreError for a database Traceloupe does not support."""
    backend = _BACKENDS.get(name)
    if backend is None:
        raise StoreError(f"unsupported database {name!r}: use a SQLite file or a postgresql:// URL")
    return backend


def backend_for_url(url: URL) -> Backend:
    """The backend ``url`` names."""
    return backend_named(url.get_backend_name())


def backend_of(bind: Engine | Connection) -> Backend:
    """The backend an engine or a connection talks to."""
    return backend_named(bind.dialect.name)


__all__ = [
    "POSTGRES",
    "SQLITE",
    "Backend",
    "BackendName",
    "backend_for_url",
    "backend_named",
    "backend_of",
    "sqlite_file_url",
]
