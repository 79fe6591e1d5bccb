"""PostgreSQL searches folded chunks of each message's text (``core.store.pg_search``), not ``ILIKE`` on the rows.

The chunks of the messages stored before are written here, a batch of messages at a time; the
trigram index on ``messages.search_text`` goes, as nothing searches that column any more. SQLite
keeps its FTS5 table: nothing changes there.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.bulk import copy_rows
from core.store.pg_search import chunk_rows

revision = "0013"
down_revision = "0012"

BATCH = 500
"""Messages read and cut at a time: memory stays bounded by a batch (a long trace's text is megabytes)."""


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    chunks_table = op.create_table(  # as this revision made it: revision 0025 adds the grams
        "search_chunks",
        sa.Column("message_pk", sa.Integer, sa.ForeignKey("messages.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("conversation_pk", sa.Integer, nullable=False),
        sa.Column("folded", sa.Text, nullable=False),
    )
    m = sa.table("messages", sa.column("id"), sa.column("conversation_pk"), sa.column("search_text"))
    after = 0
    while True:
        rows = conn.execute(
            sa.select(m.c.id, m.c.conversation_pk, m.c.search_text).where(m.c.id > after).order_by(m.c.id).limit(BATCH)
        ).all()
        if not rows:
            break
        chunks = [chunk for r in rows for chunk in chunk_rows(r.id, r.conversation_pk, r.search_text)]
        if chunks:
            copy_rows(conn, chunks_table, chunks)
        after = rows[-1].id
    op.execute("CREATE INDEX ix_search_chunks_trgm ON search_chunks USING gin (folded gin_trgm_ops)")
    op.create_index("ix_search_chunks_conversation", "search_chunks", ["conversation_pk"])
    op.execute("ANALYZE search_chunks")  # the planner picks the snippets' index only once it knows the table
    op.execute("DROP INDEX ix_messages_search_trgm")


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    op.execute("CREATE INDEX ix_messages_search_trgm ON messages USING gin (search_text gin_trgm_ops)")
    op.drop_table("search_chunks")
