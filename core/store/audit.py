"""The audit log in the store: the ``audit_events`` table, written once per event and never changed.

Failed logins are events like any other; the login rate limit counts them here (``failures_since``), so
every process behind a load balancer sees the same count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, func, insert, select

from core.store.account_tables import AUDIT_EVENTS
from core.store.engine import one_statement_write, read_transaction
from core.store.views import from_row, values_of

_A = AUDIT_EVENTS.c
LOGIN_FAILED = "login.failed"
SUITE_RUN_FINISHED = "suite.run.finished"
"""A suite run's last item ended: recorded for whoever started it, with what the run cost."""


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """Who (``actor``: an account name, None for nobody logged in) did what to what, when, from where."""

    at: int
    actor: str | None
    action: str
    target: str | None = None
    detail: dict[str, Any] | None = None
    client: str | None = None


def record(engine: Engine, event: AuditEvent) -> None:
    """Append one event."""
    with one_statement_write(engine) as conn:
        record_in(conn, event)


def record_in(conn: Connection, event: AuditEvent) -> None:
    """Append one event in the caller's transaction (so it is written with what it records, or not at all)."""
    conn.execute(insert(AUDIT_EVENTS).values(**values_of(event)))


def list_events(
    engine: Engine, *, since: int | None = None, actor: str | None = None, limit: int = 1000
) -> list[AuditEvent]:
    """The newest events first, at most ``limit``, optionally from ``since`` (ms) on and by one account."""
    query = select(AUDIT_EVENTS).order_by(_A.at.desc(), _A.id.desc()).limit(limit)
    if since is not None:
        query = query.where(_A.at >= since)
    if actor is not None:
        query = query.where(_A.actor == actor)
    with read_transaction(engine) as conn:
        return [from_row(AuditEvent, row) for row in conn.execute(query)]


def failures_since(engine: Engine, since: int, *, account: str, client: str | None) -> tuple[int, int]:
    """Failed logins from ``since`` on: of ``account``, and from ``client`` (0 when the address is unknown)."""
    count = select(func.count()).select_from(AUDIT_EVENTS).where(_A.action == LOGIN_FAILED, _A.at >= since)
    with read_transaction(engine) as conn:
        of_account = conn.execute(count.where(_A.target == account)).scalar_one()
        of_client = conn.execute(count.where(_A.client == client)).scalar_one() if client is not None else 0
    return int(of_account), int(of_client)
