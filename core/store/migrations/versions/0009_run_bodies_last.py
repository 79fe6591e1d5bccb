"""SQLite: a run's request and response bodies become its last columns.

SQLite lays a row's columns end to end and reaches a column by walking every one before it. A
replay of a 10,000-record trace sends a 12 MB body, so reading a run's status, times or reply
walked 12 MB of overflow pages when the bodies came first; the run lists and the comparison of
two runs read none of the bodies now. PostgreSQL keeps large values out of line: nothing to do.
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"

_BEFORE = (
    "id", "run_id", "idempotency_key", "conversation_pk", "up_to_msg_id", "provider", "model", "status",
    "request_body", "response_body", "error", "started_at", "finished_at", "latency_ms",
    "input_tokens", "output_tokens", "total_tokens", "usage", "reply",
)  # fmt: skip
_AFTER = (*(c for c in _BEFORE if c not in ("request_body", "response_body")), "request_body", "response_body")


def _reorder(order: tuple[str, ...]) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    with op.batch_alter_table("runs", recreate="always", partial_reordering=[order]):
        pass


def upgrade() -> None:
    _reorder(_AFTER)


def downgrade() -> None:
    _reorder(_BEFORE)
