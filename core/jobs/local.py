"""The SQLite backend: jobs in the ``jobs`` table, run by a pool of threads in this process.

A worker thread claims the oldest job that is due in one write transaction: a pending job, or a
running one whose lease has expired (its process died: ``kill -9``, a power cut). It renews the
lease of its jobs while they run. A job that raised is retried after a short back-off; once its
attempts are spent (a crash counts as one) it is recorded as failed and its task's ``on_give_up``
records the outcome. So after a restart nothing is lost and nothing stays ``running``.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

from sqlalchemy import Connection, Select, and_, delete, func, insert, or_, select, update

from core.errors import MisuseError
from core.jobs.limits import LocalLimiter, limited_sender
from core.jobs.queue import JSON, OPEN_STATUSES, JobId, JobInfo, JobSettings, JobStatus, NewJob
from core.jobs.registry import JobContext, Task, find_task
from core.store import Store
from core.store.engine import read_transaction, write_transaction
from core.store.tables import JOBS

log = logging.getLogger("traceloupe.jobs")

_J = JOBS.c
RETRY_BACKOFF_MS = 1_000
"""A job that raised waits this long times its attempts before it runs again."""
KEEP_FINISHED_MS = 7 * 24 * 3600 * 1000
"""Succeeded and cancelled jobs are deleted this long after they ended (failed ones stay, to be read)."""


def _now_ms() -> int:
    return int(time.time() * 1000)


def worker_name() -> str:
    """This process's name in the ``worker`` column: host, pid and a token (a pid is reused after a restart)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class LocalQueue:
    """The in-process queue over a SQLite store (see the module docstring)."""

    backend: Literal["sqlite", "postgresql"] = "sqlite"

    def __init__(self, store: Store, settings: JobSettings | None = None) -> None:
        self.store = store
        self.settings = settings or JobSettings()
        self.worker = worker_name()
        self._limiter = LocalLimiter(self.settings.provider_limits)
        self._wake = threading.Condition()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._running: set[int] = set()
        self._lock = threading.Lock()

    # -- the interface -----------------------------------------------------

    def enqueue(
        self, task: str, args: Mapping[str, JSON], *, provider: str, lock: str | None = None, lane: str | None = None
    ) -> JobId:
        return self.enqueue_many(task, [NewJob(args, lock, lane)], provider=provider)[0]

    def enqueue_many(self, task: str, jobs: Sequence[NewJob], *, provider: str) -> list[JobId]:
        find_task(task)
        now = _now_ms()
        ids: list[JobId] = []
        with write_transaction(self.store.engine) as conn:  # the write lock makes check-then-insert atomic
            for job in jobs:
                ids.append(self._insert(conn, task, job, provider, now))
        with self._wake:
            self._wake.notify(len(ids))
        return ids

    def _insert(self, conn: Connection, task: str, job: NewJob, provider: str, now: int) -> JobId:
        if job.lock is not None:
            open_id = conn.execute(
                select(_J.id).where(_J.lock == job.lock, _J.status.in_(OPEN_STATUSES)).order_by(_J.id).limit(1)
            ).scalar()
            if open_id is not None:
                return str(open_id)
        job_id = conn.execute(
            insert(JOBS)
            .values(
                task=task,
                args=dict(job.args),
                provider=provider,
                lock=job.lock,
                lane=job.lane,
                status="pending",
                attempts=0,
                max_attempts=self.settings.max_attempts,
                run_after=now,
                created_at=now,
            )
            .returning(_J.id)
        ).scalar_one()
        return str(job_id)

    def start(self) -> None:
        if self._threads:
            return
        self.expire_dead_leases()
        self._prune()
        self._stopping.clear()
        self._threads = [
            threading.Thread(target=self._work, name=f"job-worker-{i}", daemon=True)
            for i in range(self.settings.concurrency)
        ]
        self._threads.append(threading.Thread(target=self._renew, name="job-leases", daemon=True))
        for thread in self._threads:
            thread.start()

    def stop(self, *, wait: bool = True) -> None:
        self._stopping.set()
        with self._wake:
            self._wake.notify_all()
        if wait:
            for thread in self._threads:
                thread.join()
        self._threads = []

    def pending(self, provider: str | None = None, *, task: str | None = None) -> int:
        stmt = select(func.count()).select_from(JOBS).where(_J.status.in_(OPEN_STATUSES))
        if provider is not None:
            stmt = stmt.where(_J.provider == provider)
        if task is not None:
            stmt = stmt.where(_J.task == task)
        with read_transaction(self.store.engine) as conn:
            return int(conn.execute(stmt).scalar_one())

    def jobs(self, *, lock_prefix: str | None = None, statuses: Collection[JobStatus] | None = None) -> list[JobInfo]:
        stmt = select(JOBS).order_by(_J.id)
        if lock_prefix is not None:
            stmt = stmt.where(func.substr(_J.lock, 1, len(lock_prefix)) == lock_prefix)
        if statuses is not None:
            stmt = stmt.where(_J.status.in_(list(statuses)))
        with read_transaction(self.store.engine) as conn:
            return [_info(row) for row in conn.execute(stmt).mappings()]

    def cancel(self, job_id: JobId) -> bool:
        with write_transaction(self.store.engine) as conn:
            done = conn.execute(
                update(JOBS)
                .where(_J.id == int(job_id), _J.status == "pending")
                .values(status="cancelled", finished_at=_now_ms())
            )
        return done.rowcount == 1

    # -- the workers -------------------------------------------------------

    def _prune(self) -> None:
        with write_transaction(self.store.engine) as conn:
            conn.execute(
                delete(JOBS).where(
                    _J.status.in_(("succeeded", "cancelled")), _J.finished_at < _now_ms() - KEEP_FINISHED_MS
                )
            )

    def expire_dead_leases(self) -> int:
        """Expire at once the leases of running jobs whose process on this host is gone (a killed ``serve``
        restarted: its jobs resume now rather than when their lease runs out); how many."""
        host = socket.gethostname()
        with read_transaction(self.store.engine) as conn:
            owners = conn.execute(select(_J.worker).where(_J.status == "running").distinct()).scalars().all()
        dead = [w for w in owners if w is not None and _dead_here(w, host)]
        if not dead:
            return 0
        with write_transaction(self.store.engine) as conn:
            done = conn.execute(update(JOBS).where(_J.status == "running", _J.worker.in_(dead)).values(lease_until=0))
        return int(done.rowcount)

    def run_one(self) -> bool:
        """Claim and run one due job in this thread; False when none was due (tests and the workers' loop)."""
        claimed = self._claim()
        if claimed is None:
            return False
        row, task = claimed
        self._run(row, task)
        return True

    def _work(self) -> None:
        while not self._stopping.is_set():
            try:
                if self.run_one():
                    continue
            except Exception:  # the store failed (a lock held too long): log and try again later
                log.exception("the job worker could not claim a job")
            with self._wake:
                self._wake.wait(self.settings.poll_seconds)

    def _claim(self) -> tuple[dict[str, Any], Task] | None:
        """The oldest due job, marked running for this worker; a job whose attempts are spent is given up first."""
        while True:
            now = _now_ms()
            with read_transaction(self.store.engine) as conn:  # an idle worker never takes the write lock
                if conn.execute(self._due(now).with_only_columns(_J.id)).first() is None:
                    return None
            with write_transaction(self.store.engine) as conn:
                row = conn.execute(self._due(now)).mappings().first()
                if row is None:
                    return None
                job = dict(row)
                lost = job["status"] == "running"
                if lost and job["attempts"] >= job["max_attempts"]:
                    why = f"its worker ({job['worker']}) stopped while running it, {job['attempts']} time(s)"
                    conn.execute(
                        update(JOBS).where(_J.id == job["id"]).values(status="failed", error=why, finished_at=now)
                    )
                    give_up = job
                else:
                    give_up = None
                    conn.execute(
                        update(JOBS)
                        .where(_J.id == job["id"])
                        .values(
                            status="running",
                            attempts=job["attempts"] + 1,
                            worker=self.worker,
                            lease_until=now + int(self.settings.lease_seconds * 1000),
                        )
                    )
                    job["attempts"] += 1
            if give_up is not None:
                log.warning("job %s (%s) given up: %s", give_up["id"], give_up["task"], why)
                self._give_up(give_up, why)
                continue
            if lost:
                log.warning("job %s (%s) taken back from %s", job["id"], job["task"], row["worker"])
            with self._lock:
                self._running.add(job["id"])
            try:
                return job, find_task(job["task"])
            except MisuseError as exc:
                self._finish(job["id"], "failed", str(exc))
                with self._lock:
                    self._running.discard(job["id"])

    @staticmethod
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

    def _context(self, job: dict[str, Any]) -> JobContext:
        settings = self.settings
        return JobContext(
            store=self.store,
            job_id=str(job["id"]),
            attempt=int(job["attempts"]),
            max_attempts=int(job["max_attempts"]),
            provider=job["provider"],
            send=limited_sender(self._limiter, job["provider"], max_wait=settings.max_rate_limit_wait),
            limiter=self._limiter,
            environ=settings.environ(),
            timeout=settings.send_timeout,
        )

    def _run(self, job: dict[str, Any], task: Task) -> None:
        try:
            task.run(self._context(job), job["args"])
        except Exception as exc:
            log.exception("job %s (%s) raised", job["id"], job["task"])
            error = f"{type(exc).__name__}: {exc}"[:2000]
            if job["attempts"] < job["max_attempts"]:
                self._retry(job["id"], error, _now_ms() + RETRY_BACKOFF_MS * int(job["attempts"]))
            else:
                self._finish(job["id"], "failed", error)
                self._give_up(job, error)
        else:
            self._finish(job["id"], "succeeded", None)
        finally:
            with self._lock:
                self._running.discard(job["id"])

    def _give_up(self, job: dict[str, Any], why: str) -> None:
        try:
            task = find_task(job["task"])
            if task.on_give_up is not None:
                task.on_give_up(self._context(job), job["args"], why)
        except Exception:
            log.exception("job %s (%s): recording its end failed", job["id"], job["task"])

    def _finish(self, job_id: int, status: JobStatus, error: str | None) -> None:
        with write_transaction(self.store.engine) as conn:
            conn.execute(
                update(JOBS)
                .where(_J.id == job_id, _J.worker == self.worker, _J.status == "running")
                .values(status=status, error=error, finished_at=_now_ms(), lease_until=None)
            )

    def _retry(self, job_id: int, error: str, run_after: int) -> None:
        with write_transaction(self.store.engine) as conn:
            conn.execute(
                update(JOBS)
                .where(_J.id == job_id, _J.worker == self.worker, _J.status == "running")
                .values(status="pending", error=error, run_after=run_after, lease_until=None)
            )

    def _renew(self) -> None:
        """Extend the lease of this process's running jobs, a third of a lease apart."""
        lease_ms = int(self.settings.lease_seconds * 1000)
        while not self._stopping.wait(self.settings.lease_seconds / 3):
            with self._lock:
                ids = list(self._running)
            if not ids:
                continue
            try:
                with write_transaction(self.store.engine) as conn:
                    conn.execute(
                        update(JOBS)
                        .where(_J.id.in_(ids), _J.worker == self.worker, _J.status == "running")
                        .values(lease_until=_now_ms() + lease_ms)
                    )
            except Exception:
                log.exception("could not renew the job leases")


def _lane_heads() -> Any:
    """The oldest pending job of each lane with no job running: the only job of a lane a worker may take.

    Read once per claim (uncorrelated, over the covering index ``ix_jobs_lane``): a check per pending job
    made an idle worker's poll walk every job of a large suite run whose lanes were all busy.
    """
    mate = JOBS.alias("lane_mate")
    busy = select(mate.c.lane).where(mate.c.status == "running", mate.c.lane.is_not(None))
    heads = select(func.min(mate.c.id)).where(mate.c.status == "pending", mate.c.lane.is_not(None))
    return heads.group_by(mate.c.lane).having(mate.c.lane.not_in(busy))


def _dead_here(worker: str, host: str) -> bool:
    """Whether ``worker`` (``host:pid:token``) names a process of this host that no longer runs."""
    parts = worker.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != host or not parts[1].isdigit() or int(parts[1]) == os.getpid():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, another user's
    return False


def _info(row: Any) -> JobInfo:
    return JobInfo(
        job_id=str(row["id"]),
        task=row["task"],
        provider=row["provider"],
        status=row["status"],
        attempts=int(row["attempts"]),
        lock=row["lock"],
        args=dict(row["args"]),
        error=row["error"],
    )
