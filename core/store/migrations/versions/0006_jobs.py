"""Jobs: the in-process queue's jobs, persisted so a restart resumes them (``core.jobs.local``).

PostgreSQL keeps its jobs in Procrastinate's own tables (``traceloupe db upgrade`` applies that
schema too); the table is made on both backends so the schema is the same everywhere.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import JSON_TYPE, columns, id_column

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.create_table(
        "jobs",
        id_column(),
        sa.Column("task", sa.String(), nullable=False),
        sa.Column("args", JSON_TYPE, nullable=False),
        sa.Column("provider", sa.String(), nullable=False),
        sa.Column("lock", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        *columns(sa.Integer(), "attempts", "max_attempts"),
        sa.Column("run_after", sa.BigInteger(), nullable=False),
        sa.Column("lease_until", sa.BigInteger(), nullable=True),
        sa.Column("worker", sa.String(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_jobs_status", "jobs", ["status", "run_after", "id"])
    op.create_index("ix_jobs_lock", "jobs", ["lock"])


def downgrade() -> None:
    op.drop_index("ix_jobs_lock", table_name="jobs")
    op.drop_index("ix_jobs_status", table_name="jobs")
    op.drop_table("jobs")
