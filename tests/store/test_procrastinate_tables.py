"""What Traceloupe does beneath Procrastinate's API still fits the installed Procrastinate's schema."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from sqlalchemy import make_url

from core.store import Store
from core.store.procrastinate_tables import (
    ABANDONED_JOBS,
    PRUNE_GONE_WORKERS,
    REGISTER_WORKER,
    count_open_jobs,
    jobs_by_lock_prefix,
    open_jobs_by_lock,
)
from tests.store.store_pg import pg_database

pytestmark = pytest.mark.postgres

NOTIFY_WAIT_SECONDS = 10.0
"""An upper bound on waiting for notifications that are already sent when the statement returns."""


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    """A database migrated as ``Store.open`` does: the store's tables, Procrastinate's schema, the lane wake-up."""
    with pg_database() as url:
        yield url


@pytest.fixture
def conn(pg_url: str) -> Iterator[psycopg.Connection[Any]]:
    conninfo = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("DELETE FROM procrastinate_jobs")
        yield conn


def _insert(conn: psycopg.Connection[Any], lock: str, queueing_lock: str | None = None) -> int:
    row = conn.execute(
        "INSERT INTO procrastinate_jobs (queue_name, task_name, lock, queueing_lock, args)"
        " VALUES ('lanes', 'run', %s, %s, '{}') RETURNING id",
        (lock, queueing_lock),
    ).fetchone()
    assert row is not None
    return int(row[0])


def _received(conn: psycopg.Connection[Any], count: int) -> list[tuple[str, str]]:
    return [(n.channel, n.payload) for n in conn.notifies(timeout=NOTIFY_WAIT_SECONDS, stop_after=count)]


def test_a_freed_lane_wakes_the_workers_as_procrastinate_does_for_an_inserted_job(
    conn: psycopg.Connection[Any],
) -> None:
    """If Procrastinate renames its channels or its payload, the lane wake-up would wake no worker: this fails."""
    conn.execute('LISTEN "procrastinate_any_queue_v1"')
    conn.execute('LISTEN "procrastinate_queue_v1#lanes"')
    first = _insert(conn, "lane:a")
    _received(conn, 2)
    _insert(conn, "lane:a")
    inserted = _received(conn, 2)  # Procrastinate's own notification for the waiting job
    assert len(inserted) == 2

    conn.execute("UPDATE procrastinate_jobs SET status = 'doing' WHERE id = %s", (first,))
    conn.execute("UPDATE procrastinate_jobs SET status = 'succeeded' WHERE id = %s", (first,))

    assert sorted(_received(conn, 2)) == sorted(inserted)


def test_the_reads_beneath_the_api_count_open_jobs_and_find_them_by_queueing_lock(
    pg_url: str, conn: psycopg.Connection[Any]
) -> None:
    first = _insert(conn, "lane:a", "suite:r1:1")
    _insert(conn, "lane:b", "suite:r1:2")
    _insert(conn, "lane:c", "run:x")
    conn.execute("UPDATE procrastinate_jobs SET status = 'doing' WHERE id = %s", (first,))
    conn.execute("UPDATE procrastinate_jobs SET status = 'succeeded' WHERE id = %s", (first,))
    with Store.open(pg_url) as store:
        suite_jobs = jobs_by_lock_prefix(store.engine, "suite:r1:")
        open_ids = open_jobs_by_lock(store.engine, ["suite:r1:1", "suite:r1:2", "run:x", "run:none"])
        counts = [count_open_jobs(store.engine), count_open_jobs(store.engine, queue="lanes", task="other")]
    assert [(j.queueing_lock, j.status, j.task_name, j.queue_name) for j in suite_jobs] == [
        ("suite:r1:1", "succeeded", "run", "lanes"),
        ("suite:r1:2", "todo", "run", "lanes"),
    ]
    assert sorted(open_ids) == ["run:x", "suite:r1:2"]
    assert counts == [2, 0]


@pytest.mark.parametrize("statement", [REGISTER_WORKER, PRUNE_GONE_WORKERS, ABANDONED_JOBS])
def test_the_liveness_statements_plan_against_procrastinates_schema(
    conn: psycopg.Connection[Any], statement: str
) -> None:
    """Planned, not run: a table, column or function of Procrastinate's that is gone fails the plan."""
    conn.execute(f"EXPLAIN {statement}")  # a module constant, no input
