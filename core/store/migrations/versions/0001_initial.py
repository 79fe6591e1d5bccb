"""Initial schema: conversations, messages, conversation kinds, runs, and substring search.

Search is trigram-based on both backends so that it means the same thing on each:
a case-insensitive substring match of the search box text, CJK included (neither
FTS5's unicode61 nor PostgreSQL's ``simple`` tsvector segments Chinese). SQLite
gets an FTS5 ``trigram`` index over ``messages.search_text`` (external content,
kept current by triggers); PostgreSQL gets a GIN ``gin_trgm_ops`` index (pg_trgm).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import (
    FTS_TRIGGERS,
    JSON_TYPE,
    columns,
    conversation_key,
    id_column,
    message_columns,
    run_keys,
)
from core.store.migrations.fts import create_trigram_index

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "conversations",
        id_column(),
        sa.Column("conversation_id", sa.String(), nullable=False, unique=True),
        sa.Column("title", sa.Text(), nullable=False, server_default=""),
        sa.Column("title_ts", sa.BigInteger(), nullable=True),
        *columns(sa.Integer(), "messages", "turns", "records", "damaged", "runs", server_default="0"),
        *columns(sa.BigInteger(), "first_ts", "last_activity", nullable=True),
    )
    op.create_index("ix_conversations_last_activity", "conversations", ["last_activity", "id"])
    op.create_index("ix_conversations_first_ts", "conversations", ["first_ts", "id"])

    op.create_table("messages", *message_columns(msg_id_unique=True))
    op.create_index("ix_messages_conversation_order", "messages", ["conversation_pk", "create_ts", "id"])

    op.create_table(
        "conversation_kinds",
        conversation_key(primary_key=True),
        sa.Column("kind", sa.String(), primary_key=True),
    )
    op.create_index("ix_conversation_kinds_kind", "conversation_kinds", ["kind", "conversation_pk"])

    op.create_table(
        "runs",
        id_column(),
        *run_keys(),
        conversation_key(),
        *columns(sa.String(), "up_to_msg_id", nullable=True),
        *columns(sa.String(), "provider", "model", "status"),
        sa.Column("request_body", JSON_TYPE, nullable=False),
        sa.Column("response_body", JSON_TYPE, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        *columns(sa.BigInteger(), "finished_at", "latency_ms", nullable=True),
        *columns(sa.Integer(), "input_tokens", "output_tokens", "total_tokens", nullable=True),
        sa.Column("usage", JSON_TYPE, nullable=True),
    )
    op.create_index("ix_runs_conversation", "runs", ["conversation_pk", "started_at", "id"])

    if op.get_bind().dialect.name == "sqlite":
        create_trigram_index("message_fts", "search_text", "messages", FTS_TRIGGERS)
    else:
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        op.execute("CREATE INDEX ix_messages_search_trgm ON messages USING gin (search_text gin_trgm_ops)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS messages_fts_update")
        op.execute("DROP TRIGGER IF EXISTS messages_fts_delete")
        op.execute("DROP TRIGGER IF EXISTS messages_fts_insert")
        op.execute("DROP TABLE IF EXISTS message_fts")
    op.drop_table("runs")
    op.drop_table("conversation_kinds")
    op.drop_table("messages")
    op.drop_table("conversations")
