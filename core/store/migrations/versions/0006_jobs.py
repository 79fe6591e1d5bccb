"""Jobs: the in-process queue's jobs, persisted so a restart resumes them (``core.jobs.local``).

PostgreSQL keeps its jobs in Procrastinate's own tables (``traceloupe db upgrade`` applies that
schema too); the table is made on both backends so the schema is the same everywhere.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("task", sa.String(), nullable=False),
        sa.Column("args", _JSON, nullable=False),
        sa.Column("provider", sa.String(), nullable=False),
        sa.Column("lock", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
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
