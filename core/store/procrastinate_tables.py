"""Where Traceloupe goes beneath Procrastinate's API to its tables, in one module: what the API has no call for.

- Its schema, applied beside the store's migrations and inside their transaction (``ensure_queue_schema``):
  ``schema.sql`` creates types and tables without ``IF NOT EXISTS``, so it is applied only when its
  jobs table is absent (the migration's advisory lock makes two upgrades at once apply it once).
- The lane wake-up (:data:`LANE_WAKE`): Procrastinate notifies workers when a job is inserted, not
  when a job that held a ``lock`` ends. A worker whose last fetch found nothing sleeps until its next
  poll, so the next job of a lane that just freed would wait up to a poll interval
  (procrastinate-org/procrastinate#213 proposes the same notification).
- Reads by many queueing locks or by a lock prefix (its ``list_jobs`` filters on one exact lock), and
  the count of open jobs, which a stopped queue (its app closed) still answers.
- A worker's liveness held as an advisory lock (``core.jobs.pg_liveness``): register, prune, abandoned jobs.

Everything else (defer, cancel, retry, finish) goes through Procrastinate's API.
``tests/store/test_procrastinate_tables.py`` runs each statement here against the installed
Procrastinate's schema, so an upgrade that changes what they rely on fails there.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, text

QUEUE_TABLE = "procrastinate_jobs"

LANE_WAKE = """
CREATE INDEX IF NOT EXISTS traceloupe_jobs_waiting_lock ON procrastinate_jobs (lock)
    WHERE status = 'todo' AND lock IS NOT NULL;

CREATE OR REPLACE FUNCTION traceloupe_notify_lane_free_v1()
    RETURNS trigger
    LANGUAGE plpgsql
AS $$
DECLARE
    next_job procrastinate_jobs;
    payload TEXT;
BEGIN
    SELECT * INTO next_job FROM procrastinate_jobs WHERE lock = NEW.lock AND status = 'todo' LIMIT 1;
    IF next_job.id IS NOT NULL THEN
        -- The notification Procrastinate sends for an inserted job: the worker's fetch loop wakes on it.
        payload := json_build_object('type', 'job_inserted', 'job_id', next_job.id)::text;
        PERFORM pg_notify('procrastinate_queue_v1#' || next_job.queue_name, payload);
        PERFORM pg_notify('procrastinate_any_queue_v1', payload);
    END IF;
    RETURN NEW;
END;
$$;

DROP TRIGGER IF EXISTS traceloupe_jobs_notify_lane_free_v1 ON procrastinate_jobs;
CREATE TRIGGER traceloupe_jobs_notify_lane_free_v1
    AFTER UPDATE OF status ON procrastinate_jobs
    FOR EACH ROW WHEN (OLD.status = 'doing' AND NEW.status <> 'doing' AND NEW.lock IS NOT NULL)
    EXECUTE PROCEDURE traceloupe_notify_lane_free_v1();
"""
"""When a job holding a lane's lock ends and another job of that lane waits, workers are told a job is ready."""

DROP_LANE_WAKE = """
DROP TRIGGER IF EXISTS traceloupe_jobs_notify_lane_free_v1 ON procrastinate_jobs;
DROP FUNCTION IF EXISTS traceloupe_notify_lane_free_v1();
DROP INDEX IF EXISTS traceloupe_jobs_waiting_lock;
"""


def queue_schema_present(conn: Connection) -> bool:
    """Whether Procrastinate's tables exist in the database ``conn`` reaches."""
    return conn.execute(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": QUEUE_TABLE}).scalar() is True


def ensure_queue_schema(conn: Connection) -> bool:
    """Apply Procrastinate's schema and the lane wake-up unless present; True when this call applied them.
    PostgreSQL only."""
    if queue_schema_present(conn):
        return False
    from procrastinate.schema import SchemaManager

    _script(conn, SchemaManager.get_schema())
    _script(conn, LANE_WAKE)
    return True


def install_lane_wake(conn: Connection) -> None:
    """Add the lane wake-up to a database whose queue schema is present (a migration); idempotent."""
    if queue_schema_present(conn):
        _script(conn, LANE_WAKE)


def remove_lane_wake(conn: Connection) -> None:
    _script(conn, DROP_LANE_WAKE)


def _script(conn: Connection, sql: str) -> None:
    """Many statements, no parameters: through the raw psycopg connection, in the same transaction."""
    driver = conn.connection.driver_connection
    assert driver is not None
    driver.execute(sql)


OPEN_JOBS = text(
    "SELECT count(*) FROM procrastinate_jobs WHERE status::text IN ('todo', 'doing', 'aborting')"
    " AND (CAST(:queue AS text) IS NULL OR queue_name = :queue) AND (CAST(:task AS text) IS NULL OR task_name = :task)"
)
OPEN_JOBS_BY_LOCK = text(
    "SELECT queueing_lock, min(id) FROM procrastinate_jobs WHERE queueing_lock = ANY(:locks)"
    " AND status::text IN ('todo', 'doing', 'aborting') GROUP BY queueing_lock"
)
JOBS_BY_LOCK_PREFIX = text(
    "SELECT id, task_name, queue_name, status::text AS status, attempts, queueing_lock, args FROM procrastinate_jobs"
    " WHERE CAST(:prefix AS text) IS NULL OR left(queueing_lock, length(:prefix)) = :prefix ORDER BY id"
)


def count_open_jobs(engine: Engine, *, queue: str | None = None, task: str | None = None) -> int:
    """Jobs todo or doing (of one queue, of one task, when given).

    Read on the store's connection, not through ``JobManager.list_queues``: that needs the queue's app
    open, and a stopped queue still says how many jobs wait.
    """
    with engine.connect() as conn:
        return int(conn.execute(OPEN_JOBS, {"queue": queue, "task": task}).scalar_one())


def open_jobs_by_lock(engine: Engine, locks: Collection[str]) -> dict[str, int]:
    """The open job (todo or doing) of each queueing lock of ``locks`` that has one."""
    if not locks:
        return {}
    with engine.connect() as conn:
        rows = conn.execute(OPEN_JOBS_BY_LOCK, {"locks": list(locks)}).all()
    return {lock: int(job_id) for lock, job_id in rows}


@dataclass(frozen=True, slots=True)
class QueuedJob:
    """A row of ``procrastinate_jobs``, the columns a job listing shows."""

    id: int
    task_name: str
    queue_name: str
    status: str
    attempts: int
    queueing_lock: str | None
    args: dict[str, Any]


def jobs_by_lock_prefix(engine: Engine, prefix: str | None) -> list[QueuedJob]:
    """Every job whose queueing lock starts with ``prefix`` (every job when None), oldest first."""
    with engine.connect() as conn:
        rows = conn.execute(JOBS_BY_LOCK_PREFIX, {"prefix": prefix}).all()
    return [
        QueuedJob(r.id, r.task_name, r.queue_name, r.status, r.attempts, r.queueing_lock, r.args or {}) for r in rows
    ]


# A worker's liveness lock: key space 1953265526 (0x746C7776, "tlwv": the provider slots use "tljo") and the
# worker's id (a bigint; ids never repeat) as a signed 32-bit integer.
REGISTER_WORKER = (
    "SELECT w.worker_id, pg_advisory_lock(1953265526, (mod(w.worker_id, 4294967296) - 2147483648)::integer)"
    " FROM procrastinate_register_worker_v1() AS w"
)
"""A worker registered, its liveness lock taken in the same statement."""
PRUNE_GONE_WORKERS = (
    "DELETE FROM procrastinate_workers"
    " WHERE pg_try_advisory_xact_lock(1953265526, (mod(id, 4294967296) - 2147483648)::integer)"
    " RETURNING id AS worker_id"
)
"""Rows of workers whose lock is free; the locks this takes end with the statement (autocommit)."""
ABANDONED_JOBS = (
    "SELECT id, status, task_name, priority, lock, queueing_lock, args, scheduled_at, queue_name, attempts,"
    " worker_id FROM procrastinate_jobs WHERE status = 'doing' AND (worker_id IS NULL"
    " OR pg_try_advisory_xact_lock(1953265526, (mod(worker_id, 4294967296) - 2147483648)::integer))"
)
"""Jobs ``doing`` whose worker is gone (or was removed from ``procrastinate_workers``)."""
