"""Column types and column groups that several migrations make alike, written once.

A migration is history: once a revision that calls a helper here is released, what the helper
makes must never change, or databases upgraded before and after would differ. A new shape gets a
new helper. Helpers return new ``Column`` objects on each call: a column belongs to one table.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeEngine

JSON_TYPE: TypeEngine[Any] = sa.JSON().with_variant(JSONB(), "postgresql")
"""JSON text on SQLite, JSONB on PostgreSQL."""

FTS_TRIGGERS = (
    "CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN "
    "INSERT INTO message_fts(rowid, search_text) VALUES (new.id, new.search_text); END",
    "CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN "
    "INSERT INTO message_fts(message_fts, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); END",
    "CREATE TRIGGER messages_fts_update AFTER UPDATE OF search_text ON messages BEGIN "
    "INSERT INTO message_fts(message_fts, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); "
    "INSERT INTO message_fts(rowid, search_text) VALUES (new.id, new.search_text); END",
)
"""SQLite: the triggers that keep the ``message_fts`` index (revision 0001) current with ``messages``."""

CONVERSATION_FTS_TRIGGERS = (
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
"""SQLite: the triggers that kept (insert, revision 0020 to 0028) and keep (delete, update) ``conversation_fts``
current with ``conversations``."""
CONVERSATION_GRAMS_TRIGGERS = (
    "CREATE TRIGGER conversations_grams_insert AFTER INSERT ON conversations BEGIN "
    "INSERT INTO conversation_grams(rowid, grams) VALUES (new.id, "
    "traceloupe_grams(new.conversation_id || char(10) || new.title)); END",
    "CREATE TRIGGER conversations_grams_delete AFTER DELETE ON conversations BEGIN "
    "INSERT INTO conversation_grams(conversation_grams, rowid, grams) VALUES ('delete', old.id, "
    "traceloupe_grams(old.conversation_id || char(10) || old.title)); END",
    "CREATE TRIGGER conversations_grams_update AFTER UPDATE OF conversation_id, title ON conversations BEGIN "
    "INSERT INTO conversation_grams(conversation_grams, rowid, grams) VALUES ('delete', old.id, "
    "traceloupe_grams(old.conversation_id || char(10) || old.title)); "
    "INSERT INTO conversation_grams(rowid, grams) VALUES (new.id, "
    "traceloupe_grams(new.conversation_id || char(10) || new.title)); END",
)
"""SQLite: the same for ``conversation_grams``, of a conversation's id and title grams (a line break between them,
which no trimmed needle holds)."""


def id_column() -> sa.Column[Any]:
    """The integer primary key ``id`` of a table whose rows have no natural key."""
    return sa.Column("id", sa.Integer(), primary_key=True)


def cascade_key(name: str, target: str, **options: Any) -> sa.Column[Any]:
    """An integer column referring to ``target`` (``table.column``), its rows deleted with the row it refers to."""
    options.setdefault("nullable", False)
    return sa.Column(name, sa.Integer(), sa.ForeignKey(target, ondelete="CASCADE"), **options)


def conversation_key(**options: Any) -> sa.Column[Any]:
    """``conversation_pk``: the conversation a row belongs to, deleted with it."""
    return cascade_key("conversation_pk", "conversations.id", **options)


def message_key() -> sa.Column[Any]:
    """``message_pk``: the key of a table holding one row per message, deleted with the message."""
    return cascade_key("message_pk", "messages.id", primary_key=True, autoincrement=False)


def run_keys() -> tuple[sa.Column[Any], ...]:
    """A replay's own id and the key that makes a second request for it the same run (both unique)."""
    return (
        sa.Column("run_id", sa.String(), nullable=False, unique=True),
        sa.Column("idempotency_key", sa.String(), nullable=True, unique=True),
    )


def columns(type_: TypeEngine[Any], *names: str, nullable: bool = False, **options: Any) -> tuple[sa.Column[Any], ...]:
    """Columns of one type and the same options, in the order named."""
    return tuple(sa.Column(name, type_, nullable=nullable, **options) for name in names)


def message_columns(*, msg_id_unique: bool) -> tuple[sa.Column[Any], ...]:
    """The columns of ``messages`` as revision 0001 made them; ``msg_id`` unique on its own until 0004."""
    return (
        id_column(),
        conversation_key(),
        sa.Column("msg_id", sa.String(), nullable=False, unique=msg_id_unique),
        *columns(sa.String(), "role"),
        *columns(sa.String(), "msg_type", nullable=True),
        *columns(sa.String(), "kind"),
        sa.Column("create_ts", sa.BigInteger(), nullable=False),
        *columns(sa.Integer(), "records", "damaged"),
        *columns(JSON_TYPE, "body", "parsed"),
        sa.Column("search_text", sa.Text(), nullable=False),
        *columns(sa.String(), "source"),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.Column("imported_at", sa.BigInteger(), nullable=False),
    )
