"""Suites: named sets of conversations, and their runs with one outcome per conversation.

``suites`` holds a suite's name and the filter that chose it; ``suite_members`` its
conversations, fixed when it was made; ``suite_runs`` one replay of the whole suite
(provider, model, mode, limits, baseline); ``suite_run_items`` each conversation's outcome.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import JSON_TYPE, cascade_key, columns, conversation_key, id_column, run_keys

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    op.create_table(
        "suites",
        id_column(),
        sa.Column("name", sa.String(), nullable=False, unique=True),
        sa.Column("filter", JSON_TYPE, nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
    )
    op.create_table(
        "suite_members",
        cascade_key("suite_pk", "suites.id", primary_key=True, autoincrement=False),
        sa.Column("position", sa.Integer(), primary_key=True, autoincrement=False),
        conversation_key(),
        sa.UniqueConstraint("suite_pk", "conversation_pk", name="uq_suite_members_conversation"),
    )
    op.create_table(
        "suite_runs",
        id_column(),
        *run_keys(),
        cascade_key("suite_pk", "suites.id"),
        *columns(sa.String(), "provider", "model", "mode"),
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
        id_column(),
        cascade_key("suite_run_pk", "suite_runs.id"),
        conversation_key(),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("diverged_step", sa.Integer(), nullable=True),
        sa.Column("diverged_at", sa.String(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("run_id", sa.String(), nullable=True),
        *columns(sa.Integer(), "input_tokens", "output_tokens", nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("cost_note", sa.Text(), nullable=True),
        *columns(sa.BigInteger(), "started_at", "finished_at", "wall_ms", nullable=True),
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
