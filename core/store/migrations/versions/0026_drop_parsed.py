"""Messages no longer keep ``parsed``, the parser's reading of each message written back as JSON.

Nothing read it: every page, export, search and digest reads ``body`` (and on PostgreSQL the exact text in
``message_texts``), parsing it again where it needs the typed message. It was a second copy of every message
(a third on PostgreSQL), and making it wrote each message out once more at import. A downgrade fills it from
``body``: the same JSON whenever the parser writes back what it read.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import JSON_TYPE

revision = "0026"
down_revision = "0025"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("SET LOCAL statement_timeout = 0")  # every message rewritten: the engine's timeout is for requests
    # SQLite (3.35+) drops a column in place: no table rebuild, its triggers and indexes kept.
    op.drop_column("messages", "parsed")


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    if postgres:
        op.execute("SET LOCAL statement_timeout = 0")
    # SQLite adds a NOT NULL column only with a default; the default is gone once every row is filled.
    op.add_column("messages", sa.Column("parsed", JSON_TYPE, nullable=False, server_default="{}"))
    op.execute("UPDATE messages SET parsed = body")
    if postgres:
        op.alter_column("messages", "parsed", server_default=None)
