"""Initial schema: conversations, messages, conversation kinds, runs, and substring search.

Search is trigram-based on both backends so that it means the same thing on each:
a case-insensitive substring match of the search box text, CJK included (neither
FTS5's unicode61 nor PostgreSQL's ``simple`` tsvector segments Chinese). SQLite
gets an FTS5 ``trigram`` index over ``messages.search_text`` (external content,
kept current by triggers); PostgreSQL gets a GIN ``gin_trgm_ops`` index (pg_trgm).

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("conversation_id", sa.String(), nullable=False, unique=True),
        sa.Column("title", sa.Text(), nullable=False, server_default=""),
        sa.Column("title_ts", sa.BigInteger(), nullable=True),
        sa.Column("messages", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("turns", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("records", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("damaged", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("runs", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("first_ts", sa.BigInteger(), nullable=True),
        sa.Column("last_activity", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_conversations_last_activity", "conversations", ["last_activity", "id"])
    op.create_index("ix_conversations_first_ts", "conversations", ["first_ts", "id"])

    op.create_table(
        "messages",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "conversation_pk", sa.Integer(), sa.ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("msg_id", sa.String(), nullable=False, unique=True),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("msg_type", sa.String(), nullable=True),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("create_ts", sa.BigInteger(), nullable=False),
        sa.Column("records", sa.Integer(), nullable=False),
        sa.Column("damaged", sa.Integer(), nullable=False),
        sa.Column("body", _JSON, nullable=False),
        sa.Column("parsed", _JSON, nullable=False),
        sa.Column("search_text", sa.Text(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.Column("imported_at", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_messages_conversation_order", "messages", ["conversation_pk", "create_ts", "id"])

    op.create_table(
        "conversation_kinds",
        sa.Column(
            "conversation_pk",
            sa.Integer(),
            sa.ForeignKey("conversations.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("kind", sa.String(), primary_key=True),
    )
    op.create_index("ix_conversation_kinds_kind", "conversation_kinds", ["kind", "conversation_pk"])

    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False, unique=True),
        sa.Column("idempotency_key", sa.String(), nullable=True, unique=True),
        sa.Column(
            "conversation_pk", sa.Integer(), sa.ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("up_to_msg_id", sa.String(), nullable=True),
        sa.Column("provider", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("request_body", _JSON, nullable=False),
        sa.Column("response_body", _JSON, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
        sa.Column("latency_ms", sa.BigInteger(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("total_tokens", sa.Integer(), nullable=True),
        sa.Column("usage", _JSON, nullable=True),
    )
    op.create_index("ix_runs_conversation", "runs", ["conversation_pk", "started_at", "id"])

    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "CREATE VIRTUAL TABLE message_fts USING fts5("
            "search_text, content='messages', content_rowid='id', tokenize='trigram')"
        )
        op.execute(
            "CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN "
            "INSERT INTO message_fts(rowid, search_text) VALUES (new.id, new.search_text); END"
        )
        op.execute(
            "CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN "
            "INSERT INTO message_fts(message_fts, rowid, search_text) "
            "VALUES ('delete', old.id, old.search_text); END"
        )
        op.execute(
            "CREATE TRIGGER messages_fts_update AFTER UPDATE OF search_text ON messages BEGIN "
            "INSERT INTO message_fts(message_fts, rowid, search_text) "
            "VALUES ('delete', old.id, old.search_text); "
            "INSERT INTO message_fts(rowid, search_text) VALUES (new.id, new.search_text); END"
        )
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
