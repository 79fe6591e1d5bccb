"""Secrets the dashboard's processes share, kept in the store: made once, then read by every process.

The first process to ask inserts a fresh value; ``ON CONFLICT DO NOTHING`` lets a concurrent
first-asker lose quietly, and both then read the one row that won. The value is returned to the
caller and nowhere else: nothing here logs it.
"""

from __future__ import annotations

import secrets

from sqlalchemy import Connection, select

from core.messages.base import now_ms
from core.store.backend import backend_of
from core.store.tables import APP_SECRETS

_S = APP_SECRETS.c

SECRET_BYTES = 32


def shared_secret(conn: Connection, name: str) -> str:
    """The secret called ``name``, created (random, 64 hex characters) when no process made it yet."""
    fresh = {"name": name, "value": secrets.token_hex(SECRET_BYTES), "created_at": now_ms()}
    conn.execute(backend_of(conn).insert(APP_SECRETS).values(fresh).on_conflict_do_nothing(index_elements=["name"]))
    value = conn.execute(select(_S.value).where(_S.name == name)).scalar_one()
    return str(value)
