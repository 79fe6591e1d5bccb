"""Messages keep an outline of their stored JSON: each trace record's byte span and what placing it needs.

``message_outlines`` (``core.store.outline``) lets the dashboard open a long trace by reading
the outline and the records of one page, not the whole body. On SQLite the spans point into
``messages.body``; PostgreSQL's JSONB keeps no text, so there ``message_texts`` holds the text
the spans point into, uncompressed, so that a substring reads only the chunks it needs.
``traceloupe db upgrade`` outlines the messages stored before (``core.store.backfill``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import message_key

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "message_outlines",
        message_key(),
        sa.Column("outline", sa.Text(), nullable=False),
    )
    op.create_table(
        "message_texts",
        message_key(),
        sa.Column("text", sa.LargeBinary(), nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE message_texts ALTER COLUMN text SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.drop_table("message_texts")
    op.drop_table("message_outlines")
