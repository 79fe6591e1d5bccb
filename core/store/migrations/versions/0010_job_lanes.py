"""Jobs: a lane, whose jobs run one at a time across every worker (a suite run's concurrency, on SQLite).

A suite run of concurrency N queues its jobs in N lanes, so at most N of them run at once whichever
processes (``serve --workers``, ``suite run``) take them. PostgreSQL's jobs are Procrastinate's,
whose ``lock`` is the same thing; the column is added on both backends so the schema is the same.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"


def upgrade() -> None:
    op.add_column("jobs", sa.Column("lane", sa.String(), nullable=True))
    op.create_index("ix_jobs_lane", "jobs", ["status", "lane", "run_after"])


def downgrade() -> None:
    op.drop_index("ix_jobs_lane", table_name="jobs")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("lane")
