"""Logins in the store: the ``sessions`` table, shared by every ``serve`` process on the database.

A session is keyed by the SHA-256 of its token (``core.accounts.tokens``); this module never sees a token.
It is refused once past its absolute expiry, once idle longer than the server's idle limit, when
its account is disabled, and when it was made before the account's password last changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, delete, insert, or_, select, update

from core.accounts.roles import Role
from core.store.account_tables import SESSIONS, USERS
from core.store.engine import one_statement_write, read_transaction, write_transaction

_S = SESSIONS.c
_U = USERS.c


@dataclass(frozen=True, slots=True)
class SessionUser:
    """The account a live session belongs to, as it is now."""

    name: str
    role: Role
    last_seen_at: int


def start_session(engine: Engine, session_id: str, user_name: str, now: int, lifetime_ms: int, idle_ms: int) -> None:
    """Record a login of ``user_name`` (an enabled account), and drop sessions that can no longer be used."""
    with write_transaction(engine) as conn:
        user_pk = conn.execute(select(_U.id).where(_U.name == user_name)).scalar_one()
        conn.execute(delete(SESSIONS).where(or_(_S.expires_at <= now, _S.last_seen_at <= now - idle_ms)))
        conn.execute(
            insert(SESSIONS).values(
                id=session_id, user_pk=user_pk, created_at=now, last_seen_at=now, expires_at=now + lifetime_ms
            )
        )


def session_user(engine: Engine, session_id: str, now: int, idle_ms: int) -> SessionUser | None:
    """The account of a session that may still be used at ``now``, else None."""
    found = (
        select(_U.name, _U.role, _S.last_seen_at)
        .join(USERS, _U.id == _S.user_pk)
        .where(
            _S.id == session_id,
            _S.expires_at > now,
            _S.last_seen_at > now - idle_ms,
            _S.created_at >= _U.password_changed_at,
            _U.disabled.is_(False),
        )
    )
    with read_transaction(engine) as conn:
        row = conn.execute(found).first()
    return None if row is None else SessionUser(name=row.name, role=Role(row.role), last_seen_at=row.last_seen_at)


def touch_session(engine: Engine, session_id: str, now: int) -> None:
    """Mark the session used at ``now`` (which restarts its idle time)."""
    with one_statement_write(engine) as conn:
        conn.execute(update(SESSIONS).where(_S.id == session_id).values(last_seen_at=now))


def end_session(engine: Engine, session_id: str) -> bool:
    """Remove a session (a logout); True when there was one."""
    with one_statement_write(engine) as conn:
        return conn.execute(delete(SESSIONS).where(_S.id == session_id)).rowcount > 0
