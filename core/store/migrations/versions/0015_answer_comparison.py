"""The comparison that judged final answers, recorded with each suite run and step run, and each item's evidence.

``suite_runs.comparison`` and ``step_runs.comparison`` hold ``exact``, ``similar:T``, ``json`` or
``judge:P/M`` (``core.replay.answers``); NULL for runs recorded before, when any final answer matched.
``suite_run_items.detail`` keeps the final answers' comparison (score, word diff, the judge's verdict).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import JSON_TYPE

revision = "0015"
down_revision = "0014"


def upgrade() -> None:
    op.add_column("suite_runs", sa.Column("comparison", sa.String(), nullable=True))
    op.add_column("step_runs", sa.Column("comparison", sa.String(), nullable=True))
    op.add_column("suite_run_items", sa.Column("detail", JSON_TYPE, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("suite_run_items") as batch:
        batch.drop_column("detail")
    with op.batch_alter_table("step_runs") as batch:
        batch.drop_column("comparison")
    with op.batch_alter_table("suite_runs") as batch:
        batch.drop_column("comparison")
