"""Runs keep the reply parsed back into the stored message format.

``runs.reply`` holds the replayed answer as an AssistantTextMessage dumped through
``core.MESSAGE_ADAPTER`` (text, reasoning, tool calls, Gemini thought signatures on the
calls), beside the provider's raw ``response_body``; NULL while running and for failures.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import JSON_TYPE

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("reply", JSON_TYPE, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("reply")
