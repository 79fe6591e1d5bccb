"""PostgreSQL's pooled connections: one idle long enough is checked before use, and a dead one replaced."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool

from core.store.engine import ping_when_idle, resolve_url

pytestmark = pytest.mark.postgres


def _engine(url: str, idle_seconds: float) -> Engine:
    engine = create_engine(resolve_url(url), pool_size=1, max_overflow=0)
    ping_when_idle(engine, idle_seconds)
    return engine


def _kill_pooled_connection(engine: Engine) -> None:
    with engine.connect() as conn:
        pid = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
    killer = create_engine(engine.url, poolclass=NullPool)
    with killer.begin() as conn:
        conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    killer.dispose()


def test_a_connection_idle_past_the_bound_is_checked_and_replaced_when_dead(pg_session_url: str) -> None:
    engine = _engine(pg_session_url, idle_seconds=0)
    _kill_pooled_connection(engine)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT 1")).scalar_one() == 1
    engine.dispose()


def test_a_connection_used_moments_ago_is_not_checked(pg_session_url: str) -> None:
    """The trade: no round trip per checkout, and a server restart meanwhile fails that one statement."""
    engine = _engine(pg_session_url, idle_seconds=3600)
    _kill_pooled_connection(engine)
    with engine.connect() as conn, pytest.raises(OperationalError):
        conn.execute(text("SELECT 1"))
    with engine.connect() as conn:  # the pool threw the dead one away
        assert conn.execute(text("SELECT 1")).scalar_one() == 1
    engine.dispose()
