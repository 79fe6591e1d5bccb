"""SQLite full-text indexes that several migrations make alike, written once.

As with ``columns``: a released revision calls these, so what they execute must never change (a new form of
index gets a new helper).
"""

from __future__ import annotations

from collections.abc import Iterable

from alembic import op


def create_trigram_index(name: str, indexed: str, content: str, triggers: Iterable[str] = ()) -> None:
    """SQLite: the FTS5 trigram table ``name`` over the columns ``indexed`` (comma-separated) of the table
    ``content``, its rowid that table's ``id``; then the triggers that keep it current."""
    options = f"content='{content}', content_rowid='id', tokenize='trigram'"
    op.execute(f"CREATE VIRTUAL TABLE {name} USING fts5({indexed}, {options})")
    for trigger in triggers:
        op.execute(trigger)
