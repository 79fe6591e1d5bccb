"""SQLite: ``messages.body`` the last column of its rows, so that a long text is written in place a piece at a time.

The import writes a long line's text through incremental blob I/O into a ``zeroblob`` of its length
(``core.store.backend.sqlite``). SQLite builds a row's record without a zeroblob's bytes only when nothing
follows it in the row (https://sqlite.org/c3ref/blob_open.html: "for best results, the zeroblob should be the
last column"); with ``search_text``, ``source``, ``line`` and ``imported_at`` after it, a 160 MB zeroblob was
made whole, then copied into its record. SQLite adds a column at the end of the row: the body is copied into a
new column, the old one dropped and the new one named ``body``. ``ADD COLUMN ... NOT NULL`` needs a default;
every insert gives the body, and ``''`` is no JSON, so a row written without it would fail to read, not read as
null. PostgreSQL lays out a row as it will: nothing changes there. The downgrade leaves the order: every reader
names its columns.
"""

from __future__ import annotations

from alembic import op

revision = "0030"
down_revision = "0029"


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute("ALTER TABLE messages ADD COLUMN body_last JSON NOT NULL DEFAULT ''")
    op.execute("UPDATE messages SET body_last = body")  # no trigger: only search_text's update has one
    op.execute("ALTER TABLE messages DROP COLUMN body")
    op.execute("ALTER TABLE messages RENAME COLUMN body_last TO body")


def downgrade() -> None:
    """Nothing to undo: the columns are the same, in another order."""
