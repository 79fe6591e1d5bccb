"""The accounts' tables (revision 0023): users, their sessions, and the audit log of who did what.

They join the store's metadata when ``core.store`` is imported, like the digests' tables.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, Boolean, Column, ForeignKey, Index, Integer, String, Text, false
from sqlmodel import Field, SQLModel

from core.store.column_types import JSON_COLUMN as _JSON
from core.store.tables import table_of


class UserRow(SQLModel, table=True):
    """An account: its unique name, role, Argon2id hash (never the password) and when the password last changed."""

    __tablename__ = "users"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(sa_column=Column(String, nullable=False, unique=True))
    role: str = Field(sa_column=Column(String, nullable=False))
    password_hash: str = Field(sa_column=Column(Text, nullable=False))
    disabled: bool = Field(default=False, sa_column=Column(Boolean, nullable=False, server_default=false()))
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    password_changed_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    """Sessions made before it are refused: a password reset ends every session of the account."""


class SessionRow(SQLModel, table=True):
    """A login: ``id`` is the SHA-256 of the cookie's token, so the store never holds what a browser presents."""

    __tablename__ = "sessions"
    __table_args__ = (Index("ix_sessions_user", "user_pk"),)

    id: str = Field(sa_column=Column(String, primary_key=True))
    user_pk: int = Field(sa_column=Column(Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False))
    created_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    last_seen_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    expires_at: int = Field(sa_column=Column(BigInteger, nullable=False))
    """The absolute expiry; the idle one is ``last_seen_at`` plus the server's idle limit."""


class AuditEventRow(SQLModel, table=True):
    """Who did what, when, from where: logins (failed ones too, which the login rate limit counts), imports,
    replays, suite runs, account changes, deletes."""

    __tablename__ = "audit_events"
    __table_args__ = (
        Index("ix_audit_events_at", "at", "id"),
        Index("ix_audit_events_target", "action", "target", "at"),
        Index("ix_audit_events_client", "action", "client", "at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    at: int = Field(sa_column=Column(BigInteger, nullable=False))
    actor: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    action: str = Field(sa_column=Column(String, nullable=False))
    target: str | None = Field(default=None, sa_column=Column(String, nullable=True))
    detail: dict[str, Any] | None = Field(default=None, sa_column=Column(_JSON, nullable=True))
    client: str | None = Field(default=None, sa_column=Column(String, nullable=True))


USERS = table_of(UserRow)
SESSIONS = table_of(SessionRow)
AUDIT_EVENTS = table_of(AuditEventRow)
