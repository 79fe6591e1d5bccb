"""PostgreSQL: a job queue lane's next job wakes the workers when the lane frees (``core.store.procrastinate_tables``).

Only on a database whose queue schema is present; one that lacks it gets the schema and this trigger
together when ``traceloupe db upgrade`` applies it. SQLite's queue wakes its own threads.
"""

from __future__ import annotations

from alembic import op

from core.store.procrastinate_tables import install_lane_wake, remove_lane_wake

revision = "0014"
down_revision = "0013"


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        install_lane_wake(conn)


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        remove_lane_wake(conn)
