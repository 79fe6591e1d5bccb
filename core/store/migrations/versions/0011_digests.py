"""Derived results kept per conversation (``core.store.digests``): a digest's head, and its parts read one at a time."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import columns, conversation_key

revision = "0011"
down_revision = "0010"


def upgrade() -> None:
    op.create_table(
        "digests",
        sa.Column("key", sa.String(), primary_key=True),
        conversation_key(),
        *columns(sa.String(), "kind", "basis"),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("head", sa.LargeBinary(), nullable=False),
    )
    op.create_index("ix_digests_conversation", "digests", ["conversation_pk", "basis"])
    op.create_table(
        "digest_parts",
        sa.Column("digest_key", sa.String(), sa.ForeignKey("digests.key", ondelete="CASCADE"), primary_key=True),
        sa.Column("part", sa.String(), primary_key=True),
        sa.Column("n", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("digest_parts")
    op.drop_index("ix_digests_conversation", table_name="digests")
    op.drop_table("digests")
