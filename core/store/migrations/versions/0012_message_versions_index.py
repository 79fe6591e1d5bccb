"""An index that holds each message's version, so a conversation's content fingerprint never reads its rows.

SQLite lays a row's columns end to end: reading ``imported_at``, which sits after the message's JSON,
walks every overflow page of a long trace's row. The index answers the fingerprint's query alone.
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0011"


def upgrade() -> None:
    op.create_index("ix_messages_versions", "messages", ["conversation_pk", "id", "imported_at", "records", "damaged"])


def downgrade() -> None:
    op.drop_index("ix_messages_versions", table_name="messages")
