"""Accounts: users with a role and an Argon2id hash, their server-side sessions, and the audit log.

A session's id is the SHA-256 of the token its cookie holds: the store never holds what a browser presents.
The audit log also holds failed logins, which the login rate limit counts (``core.store.audit``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import JSON_TYPE, cascade_key, columns, id_column

revision = "0023"
down_revision = "0022"


def upgrade() -> None:
    op.create_table(
        "users",
        id_column(),
        sa.Column("name", sa.String(), nullable=False, unique=True),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False, server_default=sa.false()),
        *columns(sa.BigInteger(), "created_at", "password_changed_at"),
    )
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(), primary_key=True),
        cascade_key("user_pk", "users.id"),
        *columns(sa.BigInteger(), "created_at", "last_seen_at", "expires_at"),
    )
    op.create_index("ix_sessions_user", "sessions", ["user_pk"])
    op.create_table(
        "audit_events",
        id_column(),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(), nullable=True),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("target", sa.String(), nullable=True),
        sa.Column("detail", JSON_TYPE, nullable=True),
        sa.Column("client", sa.String(), nullable=True),
    )
    op.create_index("ix_audit_events_at", "audit_events", ["at", "id"])
    op.create_index("ix_audit_events_target", "audit_events", ["action", "target", "at"])
    op.create_index("ix_audit_events_client", "audit_events", ["action", "client", "at"])


def downgrade() -> None:
    op.drop_table("audit_events")
    op.drop_table("sessions")
    op.drop_table("users")
