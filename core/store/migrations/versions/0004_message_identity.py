"""A message's identity is (conversation, msg_id): the same msg_id may be used by two conversations.

Before, ``messages.msg_id`` was unique across the store, so a message whose id another
conversation had already used was skipped as "already stored" and lost. Now the unique key is
``(conversation_pk, msg_id)``; it also serves every look-up of a message, which is always
within one conversation.

SQLite cannot drop a column's UNIQUE, so the table is rebuilt in the documented order
(https://www.sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema Changes"):
create the new table, copy, drop the old, rename, recreate its index and search triggers.
``core.store.schema.upgrade`` runs it with foreign keys off (dropping ``messages`` would
otherwise cascade to the outlines) and checks them before committing. Row ids are copied, so
the outlines, texts and the FTS index still point at the same rows.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import FTS_TRIGGERS, id_column, message_columns

revision = "0004"
down_revision = "0003"

IDENTITY = "uq_messages_conversation_msg_id"
_PG_OLD_UNIQUE = "messages_msg_id_key"  # PostgreSQL's name for 0001's unnamed UNIQUE on msg_id


def _messages(name: str, *, msg_id_unique: bool) -> sa.Table:
    constraints = () if msg_id_unique else (sa.UniqueConstraint("conversation_pk", "msg_id", name=IDENTITY),)
    metadata = sa.MetaData()
    sa.Table("conversations", metadata, id_column())  # what the key refers to
    return sa.Table(name, metadata, *message_columns(msg_id_unique=msg_id_unique), *constraints)


def _rebuild_sqlite(*, msg_id_unique: bool) -> None:
    bind = op.get_bind()
    new = _messages("messages_rebuilt", msg_id_unique=msg_id_unique)
    new.create(bind)
    columns = ", ".join(column.name for column in new.columns)
    op.execute(f"INSERT INTO messages_rebuilt ({columns}) SELECT {columns} FROM messages")  # noqa: S608 - names from the Table
    op.execute("DROP TABLE messages")
    op.execute("ALTER TABLE messages_rebuilt RENAME TO messages")
    op.create_index("ix_messages_conversation_order", "messages", ["conversation_pk", "create_ts", "id"])
    for trigger in FTS_TRIGGERS:
        op.execute(trigger)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite(msg_id_unique=False)
        return
    op.drop_constraint(_PG_OLD_UNIQUE, "messages", type_="unique")
    op.create_unique_constraint(IDENTITY, "messages", ["conversation_pk", "msg_id"])


def downgrade() -> None:
    # Fails (as it must) when two conversations hold the same msg_id: the old schema cannot store that.
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite(msg_id_unique=True)
        return
    op.drop_constraint(IDENTITY, "messages", type_="unique")
    op.create_unique_constraint(_PG_OLD_UNIQUE, "messages", ["msg_id"])
