"""Pooled connections that may have been dropped while idle: checked before use, replaced when gone."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.exc import DisconnectionError

PING_AFTER_IDLE_SECONDS = 10.0
"""A pooled PostgreSQL connection idle this long is checked before use: servers and firewalls drop idle
connections. Checking at every checkout (``pool_pre_ping``) would cost a round trip per transaction."""
_RETURNED = "traceloupe_returned_at"


def ping_when_idle(engine: Engine, idle_seconds: float = PING_AFTER_IDLE_SECONDS) -> None:
    """Check a pooled connection before use when it sat idle ``idle_seconds`` or more; a dead one is replaced.

    One returned moments ago is used as it is: if the server restarted meanwhile, that one statement fails.
    """

    @event.listens_for(engine, "checkin")
    def _returned(_dbapi_connection: Any, record: Any) -> None:
        record.info[_RETURNED] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        returned = record.info.get(_RETURNED)  # None: connected just now
        if returned is None or time.monotonic() - returned < idle_seconds:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:  # the pool replaces it with a new connection
            raise DisconnectionError(f"a pooled connection idle for {idle_seconds:g} s or more is gone") from exc
