"""Step runs: a turn replayed step by step on its recorded tool outputs, each step with its verdict and cost.

``step_runs`` holds one run (its turn, provider, model, how it ended, where it left the
recorded path); ``step_run_steps`` its steps in order (what was sent and answered, the
verdict against the recorded step, the provider's token usage and the cost).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import JSON_TYPE, cascade_key, columns, conversation_key, id_column, run_keys

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    op.create_table(
        "step_runs",
        id_column(),
        *run_keys(),
        conversation_key(),
        *columns(sa.String(), "turn_msg_id", "provider", "model", "status"),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("diverged_at", sa.String(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        *columns(sa.Integer(), "recorded_steps", "max_steps"),
        sa.Column("max_cost", sa.Float(), nullable=True),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_step_runs_conversation", "step_runs", ["conversation_pk", "started_at", "id"])
    op.create_table(
        "step_run_steps",
        id_column(),
        cascade_key("step_run_pk", "step_runs.id"),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("recorded_msg_id", sa.String(), nullable=True),
        sa.Column("verdict", sa.String(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("detail", JSON_TYPE, nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("request_body", JSON_TYPE, nullable=False),
        *columns(JSON_TYPE, "response_body", "reply", nullable=True),
        sa.Column("latency_ms", sa.BigInteger(), nullable=True),
        *columns(sa.Integer(), "input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens", nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("cost_note", sa.Text(), nullable=True),
        sa.Column("estimate", JSON_TYPE, nullable=True),
        sa.UniqueConstraint("step_run_pk", "position", name="uq_step_run_steps_position"),
    )


def downgrade() -> None:
    op.drop_table("step_run_steps")
    op.drop_index("ix_step_runs_conversation", table_name="step_runs")
    op.drop_table("step_runs")
