"""API keys (only their hashes) and live OTLP ingest: received batches, the spans they hold, and what was made of them.

``api_keys`` serves ingest now and accounts later (``user_name``). ``ingest_batches`` holds each
``POST /v1/traces`` body as received, written before the request is answered; ``ingest_spans`` says which
batch holds which span; ``ingest_links`` and ``ingest_outputs`` let the assembly job find a conversation's
spans and the conversations it made before; ``live_conversations`` when each last received spans.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import cascade_key, id_column

revision = "0022"
down_revision = "0021"


def upgrade() -> None:
    op.create_table(
        "api_keys",
        id_column(),
        sa.Column("name", sa.Text(), nullable=False, server_default=""),
        sa.Column("scope", sa.String(), nullable=False),
        sa.Column("key_hash", sa.String(), nullable=False, unique=True),
        sa.Column("prefix", sa.String(), nullable=False),
        sa.Column("user_name", sa.Text(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=True),
        sa.Column("last_used_at", sa.BigInteger(), nullable=True),
        sa.Column("revoked_at", sa.BigInteger(), nullable=True),
    )
    op.create_table(
        "ingest_batches",
        id_column(),
        sa.Column("received_at", sa.BigInteger(), nullable=False),
        sa.Column("key_pk", sa.Integer(), sa.ForeignKey("api_keys.id", ondelete="SET NULL"), nullable=True),
        sa.Column("content_type", sa.String(), nullable=False),
        sa.Column("spans", sa.Integer(), nullable=False),
        sa.Column("assembled_at", sa.BigInteger(), nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=False),
    )
    op.create_index("ix_ingest_batches_pending", "ingest_batches", ["assembled_at", "id"])
    op.create_table(
        "ingest_spans",
        cascade_key("batch_pk", "ingest_batches.id", primary_key=True, autoincrement=False),
        sa.Column("position", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("trace_id", sa.String(), nullable=False),
        sa.Column("span_id", sa.String(), nullable=False),
    )
    op.create_index("ix_ingest_spans_trace", "ingest_spans", ["trace_id", "batch_pk"])
    op.create_table(
        "ingest_links",
        sa.Column("trace_id", sa.String(), primary_key=True),
        sa.Column("link", sa.String(), primary_key=True),
    )
    op.create_index("ix_ingest_links_link", "ingest_links", ["link", "trace_id"])
    op.create_table(
        "ingest_outputs",
        sa.Column("trace_id", sa.String(), primary_key=True),
        sa.Column("conversation_id", sa.String(), primary_key=True),
    )
    op.create_index("ix_ingest_outputs_conversation", "ingest_outputs", ["conversation_id"])
    op.create_table(
        "live_conversations",
        sa.Column("conversation_id", sa.String(), primary_key=True),
        sa.Column("last_received_at", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    for table in ("live_conversations", "ingest_outputs", "ingest_links", "ingest_spans", "ingest_batches"):
        op.drop_table(table)
    op.drop_table("api_keys")
