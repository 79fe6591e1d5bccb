"""Procrastinate's schema on the store's PostgreSQL database, applied once beside the store's migrations.

Procrastinate's ``schema.sql`` creates types and tables without ``IF NOT EXISTS``, so applying it
twice fails; it is applied only when its jobs table is absent, inside the migration's transaction
(which holds the migration advisory lock, so two upgrades at once apply it once).

Traceloupe adds one trigger to it, the lane wake-up (:data:`LANE_WAKE`): Procrastinate notifies
workers when a job is inserted, not when a job that held a ``lock`` ends. A worker whose last fetch
found nothing sleeps until its next poll, so the next job of a lane that just freed would wait up
to a poll interval (procrastinate-org/procrastinate#213 proposes the same notification).
"""

from __future__ import annotations

from sqlalchemy import Connection, text

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
