"""SQLite: the import fills the search index a batch at a time, in place of a trigger run for every message.

The ``AFTER INSERT`` trigger wrote each message's terms in a statement of its own, and FTS5 flushes its
pending terms at every statement's savepoint: one ``INSERT ... SELECT`` per batch of messages
(``core.store.backend.sqlite``) does the same work several times faster. The import is the one writer of
messages; the delete and update triggers stay. PostgreSQL's index is a plain GIN index: nothing changes there.
"""

from __future__ import annotations

from alembic import op

revision = "0021"
down_revision = "0020"


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS messages_fts_insert")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN "
            "INSERT INTO message_fts(rowid, search_text) VALUES (new.id, new.search_text); END"
        )
