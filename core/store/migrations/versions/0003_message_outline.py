"""Messages keep an outline of their stored JSON: each trace record's byte span and what placing it needs.

``message_outlines`` (``core.store.outline``) lets the dashboard open a long trace by reading
the outline and the records of one page, not the whole body. Written by imports on SQLite;
empty on PostgreSQL (JSONB renders its own text, so byte offsets into it mean nothing). A
message imported before this revision has no outline, and the dashboard reads it whole as before.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "message_outlines",
        sa.Column(
            "message_pk",
            sa.Integer(),
            sa.ForeignKey("messages.id", ondelete="CASCADE"),
            primary_key=True,
            autoincrement=False,
        ),
        sa.Column("outline", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("message_outlines")
