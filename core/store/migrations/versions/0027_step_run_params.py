"""Each step run records the generation parameters it was given: ``step_runs.params``.

A JSON object of the parameters set for the run over the turn's stored request (``max_tokens``,
``temperature``, ``top_p``, ``stop``, ``thinking``, ``effort``: ``core.providers.GenerationParams``), only those
given; NULL when none was (and for runs recorded before). A worker that runs a queued step run reads them back,
so the steps it sends carry what the form or the flags asked for.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import JSON_TYPE

revision = "0027"
down_revision = "0026"


def upgrade() -> None:
    op.add_column("step_runs", sa.Column("params", JSON_TYPE, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("step_runs") as batch:
        batch.drop_column("params")
