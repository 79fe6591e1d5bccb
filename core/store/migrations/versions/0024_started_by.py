"""Runs, step runs and suite runs record who started them: ``started_by``, an account's name.

NULL when nobody was signed in (an open dashboard, the CLI) and for runs recorded before. On SQLite a run's
bodies stay its last columns (revision 0009: a column is reached by walking those before it).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"

TABLES = ("runs", "step_runs", "suite_runs")

_RUNS_BEFORE = (
    "id", "run_id", "idempotency_key", "conversation_pk", "up_to_msg_id", "provider", "model", "status",
    "error", "started_at", "finished_at", "latency_ms",
    "input_tokens", "output_tokens", "total_tokens", "usage", "reply", "request_body", "response_body",
)  # fmt: skip
_RUNS_AFTER = (*_RUNS_BEFORE[:-2], "started_by", "request_body", "response_body")


def upgrade() -> None:
    for table in TABLES:
        op.add_column(table, sa.Column("started_by", sa.Text(), nullable=True))
    if op.get_bind().dialect.name == "sqlite":
        with op.batch_alter_table("runs", recreate="always", partial_reordering=[_RUNS_AFTER]):
            pass


def downgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("started_by")
