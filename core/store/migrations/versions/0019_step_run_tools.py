"""Each step run records the tools it sent, its tool choice, and where the tools came from.

``step_runs.tools`` holds the neutral tool list (name, description, parameters) every step of the run
sent, ``tool_choice`` the neutral choice (``auto``, ``none``, ``required`` or ``{"name": ...}``), and
``tools_source`` one of ``stored``, ``given``, ``inferred``, ``none`` (``core.providers.ToolsSource``).
NULL for runs recorded before, which sent no tools.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import JSON_TYPE

revision = "0019"
down_revision = "0018"


def upgrade() -> None:
    op.add_column("step_runs", sa.Column("tools_source", sa.String(), nullable=True))
    op.add_column("step_runs", sa.Column("tools", JSON_TYPE, nullable=True))
    op.add_column("step_runs", sa.Column("tool_choice", JSON_TYPE, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("step_runs") as batch:
        batch.drop_column("tool_choice")
        batch.drop_column("tools")
        batch.drop_column("tools_source")
