"""SQLite: the import fills the conversations' search indexes a batch at a time, in place of triggers run for
every conversation.

The ``AFTER INSERT`` triggers of revision 0020 wrote each new conversation's id and title into
``conversation_fts`` and ``conversation_grams`` in statements of their own, and FTS5 flushes its pending
terms at every statement's savepoint, as ``message_fts`` did before revision 0021: one ``INSERT ... SELECT``
per table and batch (``core.store.backend.sqlite``) does the same work in about a third of the time. The
import is the one writer of conversations; the delete and update triggers stay. PostgreSQL's indexes are the
server's: nothing changes there.
"""

from __future__ import annotations

from alembic import op

from core.store.migrations.columns import CONVERSATION_FTS_TRIGGERS, CONVERSATION_GRAMS_TRIGGERS

revision = "0029"
down_revision = "0028"

INSERT_TRIGGERS = {
    "conversations_fts_insert": CONVERSATION_FTS_TRIGGERS[0],
    "conversations_grams_insert": CONVERSATION_GRAMS_TRIGGERS[0],
}


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in INSERT_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for trigger in INSERT_TRIGGERS.values():
            op.execute(trigger)
