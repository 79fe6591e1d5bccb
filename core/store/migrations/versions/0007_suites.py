"""Suites: named sets of conversations, and their runs with one outcome per conversation.

``suites`` holds a suite's name and the filter that chose it; ``suite_members`` its
conversations, fixed when it was made; ``suite_runs`` one replay of the whole suite
(provider, model, mode, limits, baseline); ``suite_run_items`` each conversation's outcome.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "suites",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(), nullable=False, unique=True),
        sa.Column("filter", _JSON, nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
    )
    op.create_table(
        "suite_members",
        sa.Column(
            "suite_pk", sa.Integer(), sa.ForeignKey("suites.id", ondelete="CASCADE"), primary_key=True,
            autoincrement=False,
        ),
        sa.Column("position", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column(
            "conversation_pk", sa.Integer(), sa.ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.UniqueConstraint("suite_pk", "conversation_pk", name="uq_suite_members_conversation"),
    )  # fmt: skip
    op.create_table(
        "suite_runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False, unique=True),
        sa.Column("suite_pk", sa.Integer(), sa.ForeignKey("suites.id", ondelete="CASCADE"), nullable=False),
        sa.Column("provider", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("mode", sa.String(), nullable=False),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("max_cost", sa.Float(), nullable=True),
        sa.Column("baseline_pk", sa.Integer(), sa.ForeignKey("suite_runs.id", ondelete="SET NULL"), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_suite_runs_suite", "suite_runs", ["suite_pk", "created_at", "id"])
    op.create_table(
        "suite_run_items",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("suite_run_pk", sa.Integer(), sa.ForeignKey("suite_runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column(
            "conversation_pk", sa.Integer(), sa.ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("diverged_step", sa.Integer(), nullable=True),
        sa.Column("diverged_at", sa.String(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("cost_note", sa.Text(), nullable=True),
        sa.Column("started_at", sa.BigInteger(), nullable=True),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
        sa.Column("wall_ms", sa.BigInteger(), nullable=True),
        sa.UniqueConstraint("suite_run_pk", "conversation_pk", name="uq_suite_run_items_conversation"),
    )
    op.create_index("ix_suite_run_items_outcome", "suite_run_items", ["suite_run_pk", "outcome"])


def downgrade() -> None:
    op.drop_index("ix_suite_run_items_outcome", table_name="suite_run_items")
    op.drop_table("suite_run_items")
    op.drop_index("ix_suite_runs_suite", table_name="suite_runs")
    op.drop_table("suite_runs")
    op.drop_table("suite_members")
    op.drop_table("suites")
