"""A conversation's id and title are searched through an index, as its messages are, not by a scan of every row.

The list's search matches a conversation's id, its title or a message's text. The messages were indexed
(FTS5 ``message_fts`` on SQLite, ``search_chunks`` on PostgreSQL) but the id and title were read row by row,
so every search read every conversation. SQLite gets an FTS5 ``trigram`` table over both columns (external
content, kept current by triggers like ``message_fts``, filled here by ``rebuild``); PostgreSQL a ``pg_trgm``
index on each column as the search folds it (``lower``), filled as it is created.
"""

from __future__ import annotations

from alembic import op

revision = "0020"
down_revision = "0019"

SQLITE_TRIGGERS = (
    "CREATE TRIGGER conversations_fts_insert AFTER INSERT ON conversations BEGIN "
    "INSERT INTO conversation_fts(rowid, conversation_id, title) VALUES (new.id, new.conversation_id, new.title); END",
    "CREATE TRIGGER conversations_fts_delete AFTER DELETE ON conversations BEGIN "
    "INSERT INTO conversation_fts(conversation_fts, rowid, conversation_id, title) "
    "VALUES ('delete', old.id, old.conversation_id, old.title); END",
    "CREATE TRIGGER conversations_fts_update AFTER UPDATE OF conversation_id, title ON conversations BEGIN "
    "INSERT INTO conversation_fts(conversation_fts, rowid, conversation_id, title) "
    "VALUES ('delete', old.id, old.conversation_id, old.title); "
    "INSERT INTO conversation_fts(rowid, conversation_id, title) VALUES (new.id, new.conversation_id, new.title); END",
)
POSTGRES_INDEXES = {
    "ix_search_conversations_id": "conversation_id",
    "ix_search_conversations_title": "title",
}


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "CREATE VIRTUAL TABLE conversation_fts USING fts5("
            "conversation_id, title, content='conversations', content_rowid='id', tokenize='trigram')"
        )
        for trigger in SQLITE_TRIGGERS:
            op.execute(trigger)
        op.execute("INSERT INTO conversation_fts(conversation_fts) VALUES ('rebuild')")
        return
    for name, column in POSTGRES_INDEXES.items():
        op.execute(f"CREATE INDEX {name} ON conversations USING gin (lower({column}) gin_trgm_ops)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for trigger in ("conversations_fts_insert", "conversations_fts_delete", "conversations_fts_update"):
            op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        op.execute("DROP TABLE IF EXISTS conversation_fts")
        return
    for name in POSTGRES_INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {name}")
