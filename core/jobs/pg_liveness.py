"""Which PostgreSQL workers are alive: each holds a session advisory lock for as long as its process runs.

A worker registers in ``procrastinate_workers`` and takes the lock keyed by its id in the same
statement, on a connection of its own that it keeps until it stops. A job ``doing`` is taken back
only when the lock of the worker running it is free, that is when the process is gone (its
connection closed: a ``kill -9``, an exit) or its host stopped answering the database for the
holder's own ``lease_seconds`` (the TCP keepalive the holder sets on that connection). Never by a
timer another process chose: Procrastinate's own reading of a heartbeat against the reader's
``stalled_worker_timeout`` took live jobs from a worker whose heartbeat interval was longer.
"""

from __future__ import annotations

import math
from typing import Any

import psycopg
from procrastinate.jobs import Job
from procrastinate.manager import JobManager

from core.store.procrastinate_tables import ABANDONED_JOBS, PRUNE_GONE_WORKERS, REGISTER_WORKER


async def open_liveness(conninfo: str, lease_seconds: float) -> psycopg.AsyncConnection[Any]:
    """The connection a worker holds its lock on; the server drops it once the host is silent ``lease_seconds``."""
    conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True)
    probe = max(1, math.ceil(lease_seconds / 3))
    for name, value in (
        ("tcp_keepalives_idle", probe),
        ("tcp_keepalives_interval", probe),
        ("tcp_keepalives_count", 3),
        ("tcp_user_timeout", max(1000, int(lease_seconds * 1000))),
    ):
        await conn.execute(f"SET {name} = {int(value)}")  # integers of ours: no input reaches this text
    return conn


class LiveJobManager(JobManager):
    """Procrastinate's job manager with liveness by lock: registration takes the lock, pruning reads it."""

    def __init__(self, connector: Any, liveness: psycopg.AsyncConnection[Any]) -> None:
        super().__init__(connector)
        self._liveness = liveness

    async def register_worker(self) -> int:
        cursor = await self._liveness.execute(REGISTER_WORKER)
        row = await cursor.fetchone()
        assert row is not None
        return int(row[0])

    async def prune_stalled_workers(self, seconds_since_heartbeat: float) -> list[int]:
        """The workers whose process is gone, whatever ``seconds_since_heartbeat`` this process chose."""
        rows = await self.connector.execute_query_all_async(query=PRUNE_GONE_WORKERS)
        return [row["worker_id"] for row in rows]

    async def abandoned_jobs(self) -> list[Job]:
        """Jobs ``doing`` whose worker's process is gone."""
        rows = await self.connector.execute_query_all_async(query=ABANDONED_JOBS)
        return [Job.from_row(row) for row in rows]
