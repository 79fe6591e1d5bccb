"""Request contexts: what a conversation's or a turn's requests carried besides the messages (``core.request_context``).

One row per conversation (``turn`` NULL) or per turn: the tools offered, the tool choice, the provider and
model, the generation parameters, each as neutral JSON.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import JSON_TYPE, columns, conversation_key, id_column

revision = "0018"
down_revision = "0017"


def upgrade() -> None:
    op.create_table(
        "request_contexts",
        id_column(),
        conversation_key(),
        *columns(sa.String(), "turn", "provider", "model", nullable=True),
        *columns(JSON_TYPE, "tools", "tool_choice", "params", nullable=True),
        sa.UniqueConstraint("conversation_pk", "turn", name="uq_request_contexts_turn"),
    )


def downgrade() -> None:
    op.drop_table("request_contexts")
