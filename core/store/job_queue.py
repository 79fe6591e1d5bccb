"""The in-process queue's jobs in the store: the ``jobs`` table that ``core.jobs.local`` runs.

Each function opens its own transaction. A worker claims the oldest job that is due in one write
transaction: a pending job (the first of its lane, when it has one), or a running one whose lease
has expired (its process died). Only the worker that holds a job ends it, retries it or renews
its lease, so a worker presumed dead that was not changes nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from sqlalchemy import ColumnElement, Connection, Engine, Select, and_, delete, func, insert, or_, select, update

from core.store.engine import read_transaction, write_transaction
from core.store.tables import JOBS

JobStatus = Literal["pending", "running", "succeeded", "failed", "cancelled"]
OPEN_STATUSES: tuple[JobStatus, ...] = ("pending", "running")

_J = JOBS.c


@dataclass(frozen=True, slots=True)
class StoredJob:
    """One row of the ``jobs`` table."""

    id: int
    task: str
    args: dict[str, Any]
    provider: str
    lock: str | None
    lane: str | None
    status: JobStatus
    attempts: int
    max_attempts: int
    worker: str | None
    error: str | None


class JobToQueue(Protocol):
    """What a job to insert carries besides its task and provider (``core.jobs.queue.NewJob``)."""

    @property
    def args(self) -> Mapping[str, Any]: ...

    @property
    def lock(self) -> str | None: ...

    @property
    def lane(self) -> str | None: ...


def insert_jobs(
    engine: Engine, task: str, jobs: Sequence[JobToQueue], *, provider: str, max_attempts: int, now: int
) -> list[int]:
    """Insert ``jobs`` pending, in one transaction; the id of each (an open job of the same lock instead of a new one).

    The write lock (SQLite) makes the check of the lock and the insert atomic.
    """
    with write_transaction(engine) as conn:
        return [_insert(conn, task, job, provider, max_attempts, now) for job in jobs]


def _insert(conn: Connection, task: str, job: JobToQueue, provider: str, max_attempts: int, now: int) -> int:
    if job.lock is not None:
        open_id = conn.execute(
            select(_J.id).where(_J.lock == job.lock, _J.status.in_(OPEN_STATUSES)).order_by(_J.id).limit(1)
        ).scalar()
        if open_id is not None:
            return int(open_id)
    row = {
        "task": task, "args": dict(job.args), "provider": provider, "lock": job.lock, "lane": job.lane,
        "status": "pending", "attempts": 0, "max_attempts": max_attempts, "run_after": now, "created_at": now,
    }  # fmt: skip
    return int(conn.execute(insert(JOBS).values(row).returning(_J.id)).scalar_one())


def count_open(engine: Engine, *, provider: str | None = None, task: str | None = None) -> int:
    """Jobs pending or running (of one provider, of one task, when given)."""
    stmt = select(func.count()).select_from(JOBS).where(_J.status.in_(OPEN_STATUSES))
    if provider is not None:
        stmt = stmt.where(_J.provider == provider)
    if task is not None:
        stmt = stmt.where(_J.task == task)
    with read_transaction(engine) as conn:
        return int(conn.execute(stmt).scalar_one())


def list_jobs(
    engine: Engine, *, lock_prefix: str | None = None, statuses: Collection[JobStatus] | None = None
) -> list[StoredJob]:
    """Jobs whose lock starts with ``lock_prefix`` and whose status is in ``statuses`` (when given), oldest first."""
    stmt = select(JOBS).order_by(_J.id)
    if lock_prefix is not None:
        stmt = stmt.where(func.substr(_J.lock, 1, len(lock_prefix)) == lock_prefix)
    if statuses is not None:
        stmt = stmt.where(_J.status.in_(list(statuses)))
    with read_transaction(engine) as conn:
        return [_job(row) for row in conn.execute(stmt)]


def cancel_pending(engine: Engine, job_id: int, *, now: int) -> bool:
    """Cancel a job that has not started; True when it was pending."""
    with write_transaction(engine) as conn:
        done = conn.execute(
            update(JOBS).where(_J.id == job_id, _J.status == "pending").values(status="cancelled", finished_at=now)
        )
    return done.rowcount == 1


def prune_ended(engine: Engine, *, before: int) -> None:
    """Delete the jobs that succeeded or were cancelled before ``before`` (failed ones stay, to be read)."""
    with write_transaction(engine) as conn:
        conn.execute(delete(JOBS).where(_J.status.in_(("succeeded", "cancelled")), _J.finished_at < before))


def running_workers(engine: Engine) -> list[str]:
    """The workers holding a running job."""
    with read_transaction(engine) as conn:
        owners = conn.execute(select(_J.worker).where(_J.status == "running").distinct()).scalars().all()
    return [w for w in owners if w is not None]


def expire_leases(engine: Engine, workers: Collection[str]) -> int:
    """End at once the leases of the running jobs of ``workers`` (processes known to be gone); how many."""
    with write_transaction(engine) as conn:
        done = conn.execute(update(JOBS).where(_J.status == "running", _J.worker.in_(workers)).values(lease_until=0))
    return int(done.rowcount)


@dataclass(frozen=True, slots=True)
class DueJob:
    """The due job a claim found: taken by the claiming worker, or failed because its attempts are spent."""

    job: StoredJob
    taken_from: str | None
    """The worker whose lease had expired, when the job was running."""
    given_up: str | None
    """Why the job is failed now instead (its workers died running it as many times as it may run)."""


def claim_due(engine: Engine, worker: str, *, now: int, lease_ms: int) -> DueJob | None:
    """The oldest job due at ``now``, running for ``worker`` until ``now + lease_ms``; None when none is due.

    A read comes first so an idle worker's poll never takes the write lock.
    """
    with read_transaction(engine) as conn:
        if conn.execute(_due(now).with_only_columns(_J.id)).first() is None:
            return None
    with write_transaction(engine) as conn:
        row = conn.execute(_due(now)).first()
        if row is None:
            return None
        job = _job(row)
        lost = job.worker if job.status == "running" else None
        if lost is not None and job.attempts >= job.max_attempts:
            why = f"its worker ({job.worker}) stopped while running it, {job.attempts} time(s)"
            conn.execute(update(JOBS).where(_J.id == job.id).values(status="failed", error=why, finished_at=now))
            return DueJob(job, lost, why)
        taken = {"status": "running", "attempts": job.attempts + 1, "worker": worker, "lease_until": now + lease_ms}
        conn.execute(update(JOBS).where(_J.id == job.id).values(taken))
    return DueJob(dataclasses.replace(job, status="running", attempts=job.attempts + 1, worker=worker), lost, None)


def end_job(engine: Engine, job_id: int, worker: str, *, status: JobStatus, error: str | None, now: int) -> None:
    """Record how a job ``worker`` holds ended."""
    _update_held(engine, _J.id == job_id, worker, status=status, error=error, finished_at=now, lease_until=None)


def retry_job(engine: Engine, job_id: int, worker: str, *, error: str, run_after: int) -> None:
    """Put a job ``worker`` holds back to pending, to run again at ``run_after``."""
    _update_held(engine, _J.id == job_id, worker, status="pending", error=error, run_after=run_after, lease_until=None)


def renew_leases(engine: Engine, job_ids: Collection[int], worker: str, *, until: int) -> None:
    """Extend the leases of the jobs ``worker`` holds among ``job_ids``."""
    _update_held(engine, _J.id.in_(list(job_ids)), worker, lease_until=until)


def _update_held(engine: Engine, jobs: ColumnElement[bool], worker: str, **values: Any) -> None:
    """``values`` set on the ``jobs`` that ``worker`` runs (a job taken back from it meanwhile is left alone)."""
    with write_transaction(engine) as conn:
        conn.execute(update(JOBS).where(jobs, _J.worker == worker, _J.status == "running").values(**values))


def _due(now: int) -> Select[Any]:
    """The oldest job due at ``now``: pending, past its back-off and first in its lane, or running with its
    lease expired."""
    pending = and_(_J.status == "pending", _J.run_after <= now)
    due = or_(
        and_(pending, _J.lane.is_(None)),
        and_(_J.id.in_(_lane_heads()), _J.run_after <= now),  # heads are pending: looked up by id
        and_(_J.status == "running", _J.lease_until < now),
    )
    return select(JOBS).where(due).order_by(_J.id).limit(1)


def _lane_heads() -> Any:
    """The oldest pending job of each lane with no job running: the only job of a lane a worker may take.

    Read once per claim (uncorrelated, over the covering index ``ix_jobs_lane``): a check per pending job
    made an idle worker's poll walk every job of a large suite run whose lanes were all busy.
    """
    mate = JOBS.alias("lane_mate")
    busy = select(mate.c.lane).where(mate.c.status == "running", mate.c.lane.is_not(None))
    heads = select(func.min(mate.c.id)).where(mate.c.status == "pending", mate.c.lane.is_not(None))
    return heads.group_by(mate.c.lane).having(mate.c.lane.not_in(busy))


def _job(row: Any) -> StoredJob:
    return StoredJob(
        id=int(row.id), task=row.task, args=dict(row.args), provider=row.provider, lock=row.lock, lane=row.lane,
        status=row.status, attempts=int(row.attempts), max_attempts=int(row.max_attempts), worker=row.worker,
        error=row.error,
    )  # fmt: skip
