"""PostgreSQL: no planner statistics for the columns that are only read, never filtered, joined or sorted on.

``ANALYZE`` after a bulk import (``core.store.statistics``) sorted a sample of every column: the messages' JSONB
bodies, their search texts, their exact texts and outlines were about a third of its time, for statistics that no
query's plan reads (each of these columns is read by row id). A column's statistics target of 0 leaves it out of
every ``ANALYZE``, autovacuum's too (https://www.postgresql.org/docs/current/sql-altertable.html, ``SET
STATISTICS``). SQLite's ``ANALYZE`` reads indexes only: nothing changes there.
"""

from __future__ import annotations

from alembic import op

revision = "0033"
down_revision = "0032"

READ_ONLY_COLUMNS = (
    ("messages", "body"),
    ("messages", "search_text"),
    ("message_texts", "text"),
    ("message_outlines", "outline"),
)


def _set_statistics(target: int) -> None:
    for table, column in READ_ONLY_COLUMNS:  # names are the constants above
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET STATISTICS {target}")


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _set_statistics(0)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _set_statistics(-1)  # the server's default_statistics_target
