"""Messages keep an outline of their stored JSON: each trace record's byte span and what placing it needs.

``message_outlines`` (``core.store.outline``) lets the dashboard open a long trace by reading
the outline and the records of one page, not the whole body. On SQLite the spans point into
``messages.body``; PostgreSQL's JSONB keeps no text, so there ``message_texts`` holds the text
the spans point into, uncompressed, so that a substring reads only the chunks it needs.
``traceloupe db upgrade`` outlines the messages stored before (``core.store.backfill``).

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
    op.create_table(
        "message_texts",
        sa.Column(
            "message_pk",
            sa.Integer(),
            sa.ForeignKey("messages.id", ondelete="CASCADE"),
            primary_key=True,
            autoincrement=False,
        ),
        sa.Column("text", sa.LargeBinary(), nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE message_texts ALTER COLUMN text SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.drop_table("message_texts")
    op.drop_table("message_outlines")
