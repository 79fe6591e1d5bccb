"""Every search goes through an index: a conversation's id and title, and text shorter than a trigram.

The list's search matches a conversation's id, its title or a message's text. The messages were indexed
(FTS5 ``message_fts`` on SQLite, ``search_chunks`` on PostgreSQL) but the id and title were read row by row,
so every search read every conversation. SQLite gets an FTS5 ``trigram`` table over both columns (external
content, kept current by triggers like ``message_fts``, filled here by ``rebuild``); PostgreSQL a ``pg_trgm``
index on each column as the search folds it (``lower``), filled as it is created.

A needle of one or two characters was a scan of every message; now the characters and pairs of each text
answer it (``core.store.grams``): on SQLite the FTS5 table ``message_grams``, filled here a batch of messages
at a time and kept by the import; on PostgreSQL GIN indexes on ``traceloupe_grams`` of the search chunks, the
ids and the titles, which the server keeps current.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.grams import (
    CONVERSATION_GRAMS_TABLE,
    GRAMS_FUNCTION,
    GRAMS_FUNCTION_SQL,
    GRAMS_TABLE,
    write_grams,
)
from core.store.migrations.columns import CONVERSATION_FTS_TRIGGERS, CONVERSATION_GRAMS_TRIGGERS
from core.store.migrations.fts import create_trigram_index

revision = "0020"
down_revision = "0019"

POSTGRES_INDEXES = {
    "ix_search_conversations_id": "conversations USING gin (lower(conversation_id) gin_trgm_ops)",
    "ix_search_conversations_title": "conversations USING gin (lower(title) gin_trgm_ops)",
    "ix_search_chunks_grams": f"search_chunks USING gin ({GRAMS_FUNCTION}(folded))",
    "ix_search_conversations_id_grams": f"conversations USING gin ({GRAMS_FUNCTION}(lower(conversation_id)))",
    "ix_search_conversations_title_grams": f"conversations USING gin ({GRAMS_FUNCTION}(lower(title)))",
}
BATCH = 5000
"""SQLite: messages read and indexed at a time (memory bounded by a batch)."""


def _fill_grams() -> None:
    conn = op.get_bind()
    m = sa.table("messages", sa.column("id"), sa.column("search_text"))
    after = 0
    while True:
        rows = conn.execute(
            sa.select(m.c.id, m.c.search_text).where(m.c.id > after).order_by(m.c.id).limit(BATCH)
        ).all()
        if not rows:
            return
        write_grams(conn, [(r.id, r.search_text) for r in rows])
        after = rows[-1].id


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        create_trigram_index("conversation_fts", "conversation_id, title", "conversations", CONVERSATION_FTS_TRIGGERS)
        op.execute("INSERT INTO conversation_fts(conversation_fts) VALUES ('rebuild')")
        for table in (GRAMS_TABLE, CONVERSATION_GRAMS_TABLE):
            op.execute(f"CREATE VIRTUAL TABLE {table} USING fts5(grams, content='', detail=none, tokenize='ascii')")
        _fill_grams()
        for trigger in CONVERSATION_GRAMS_TRIGGERS:
            op.execute(trigger)
        op.execute(
            "INSERT INTO conversation_grams(rowid, grams) "
            "SELECT id, traceloupe_grams(conversation_id || char(10) || title) FROM conversations"
        )
        return
    op.execute("SET LOCAL statement_timeout = 0")  # indexing every message: the engine's timeout is for requests
    op.execute(GRAMS_FUNCTION_SQL)
    for name, target in POSTGRES_INDEXES.items():
        op.execute(f"CREATE INDEX {name} ON {target}")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for table in ("conversations_fts", "conversations_grams"):
            for event in ("insert", "delete", "update"):
                op.execute(f"DROP TRIGGER IF EXISTS {table}_{event}")
        for table in ("conversation_fts", GRAMS_TABLE, CONVERSATION_GRAMS_TABLE):
            op.execute(f"DROP TABLE IF EXISTS {table}")
        return
    for name in POSTGRES_INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {name}")
    op.execute(f"DROP FUNCTION IF EXISTS {GRAMS_FUNCTION}(text)")
