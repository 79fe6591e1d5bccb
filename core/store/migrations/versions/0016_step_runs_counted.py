"""Step runs count in their conversation's list figures (``runs``, ``last_activity``), as replies do.

A step run recorded before this revision was not counted: add each conversation's step runs, and
their latest start to its last activity.
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import case, column, exists, func, or_, select, table, update

revision = "0016"
down_revision = "0015"

_CONVERSATIONS = table("conversations", column("id"), column("runs"), column("last_activity"))
_STEP_RUNS = table("step_runs", column("conversation_pk"), column("started_at"))
_OF_IT = _STEP_RUNS.c.conversation_pk == _CONVERSATIONS.c.id
_COUNT = select(func.count()).where(_OF_IT).scalar_subquery()


def upgrade() -> None:
    c = _CONVERSATIONS.c
    latest = select(func.max(_STEP_RUNS.c.started_at)).where(_OF_IT).scalar_subquery()
    later = case((or_(c.last_activity.is_(None), c.last_activity < latest), latest), else_=c.last_activity)
    op.get_bind().execute(
        update(_CONVERSATIONS).where(exists().where(_OF_IT)).values(runs=c.runs + _COUNT, last_activity=later)
    )


def downgrade() -> None:
    # The last activity a step run set stays: the one before it is not kept.
    c = _CONVERSATIONS.c
    op.get_bind().execute(update(_CONVERSATIONS).where(c.runs >= _COUNT).values(runs=c.runs - _COUNT))
