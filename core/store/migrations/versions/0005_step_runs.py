"""Step runs: a turn replayed step by step on its recorded tool outputs, each step with its verdict and cost.

``step_runs`` holds one run (its turn, provider, model, how it ended, where it left the
recorded path); ``step_run_steps`` its steps in order (what was sent and answered, the
verdict against the recorded step, the provider's token usage and the cost).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "step_runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False, unique=True),
        sa.Column("idempotency_key", sa.String(), nullable=True, unique=True),
        sa.Column(
            "conversation_pk", sa.Integer(), sa.ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("turn_msg_id", sa.String(), nullable=False),
        sa.Column("provider", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("diverged_at", sa.String(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("recorded_steps", sa.Integer(), nullable=False),
        sa.Column("max_steps", sa.Integer(), nullable=False),
        sa.Column("max_cost", sa.Float(), nullable=True),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_step_runs_conversation", "step_runs", ["conversation_pk", "started_at", "id"])
    op.create_table(
        "step_run_steps",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("step_run_pk", sa.Integer(), sa.ForeignKey("step_runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("recorded_msg_id", sa.String(), nullable=True),
        sa.Column("verdict", sa.String(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("detail", _JSON, nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("request_body", _JSON, nullable=False),
        sa.Column("response_body", _JSON, nullable=True),
        sa.Column("reply", _JSON, nullable=True),
        sa.Column("latency_ms", sa.BigInteger(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("cached_tokens", sa.Integer(), nullable=True),
        sa.Column("reasoning_tokens", sa.Integer(), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("cost_note", sa.Text(), nullable=True),
        sa.Column("estimate", _JSON, nullable=True),
        sa.UniqueConstraint("step_run_pk", "position", name="uq_step_run_steps_position"),
    )


def downgrade() -> None:
    op.drop_table("step_run_steps")
    op.drop_index("ix_step_runs_conversation", table_name="step_runs")
    op.drop_table("step_runs")
