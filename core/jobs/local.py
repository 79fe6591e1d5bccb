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
from typing import Literal

from core.errors import MisuseError
from core.jobs.limits import LocalLimiter, limited_sender
from core.jobs.queue import JSON, JobId, JobInfo, JobSettings, JobStatus, NewJob
from core.jobs.registry import JobContext, Task, find_task
from core.store import Store
from core.store import job_queue as stored
from core.store.job_queue import StoredJob

log = logging.getLogger("traceloupe.jobs")

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
        max_attempts = self.settings.max_attempts
        ids = stored.insert_jobs(
            self.store.engine, task, jobs, provider=provider, max_attempts=max_attempts, now=_now_ms()
        )
        with self._wake:
            self._wake.notify(len(ids))
        return [str(i) for i in ids]

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
        return stored.count_open(self.store.engine, provider=provider, task=task)

    def jobs(self, *, lock_prefix: str | None = None, statuses: Collection[JobStatus] | None = None) -> list[JobInfo]:
        return [_info(job) for job in stored.list_jobs(self.store.engine, lock_prefix=lock_prefix, statuses=statuses)]

    def cancel(self, job_id: JobId) -> bool:
        return stored.cancel_pending(self.store.engine, int(job_id), now=_now_ms())

    # -- the workers -------------------------------------------------------

    def _prune(self) -> None:
        stored.prune_ended(self.store.engine, before=_now_ms() - KEEP_FINISHED_MS)

    def expire_dead_leases(self) -> int:
        """Expire at once the leases of running jobs whose process on this host is gone (a killed ``serve``
        restarted: its jobs resume now rather than when their lease runs out); how many."""
        host = socket.gethostname()
        dead = [w for w in stored.running_workers(self.store.engine) if _dead_here(w, host)]
        return stored.expire_leases(self.store.engine, dead) if dead else 0

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

    def _claim(self) -> tuple[StoredJob, Task] | None:
        """The oldest due job, marked running for this worker; a job whose attempts are spent is given up first."""
        lease_ms = int(self.settings.lease_seconds * 1000)
        while True:
            due = stored.claim_due(self.store.engine, self.worker, now=_now_ms(), lease_ms=lease_ms)
            if due is None:
                return None
            job = due.job
            if due.given_up is not None:
                log.warning("job %s (%s) given up: %s", job.id, job.task, due.given_up)
                self._give_up(job, due.given_up)
                continue
            if due.taken_from is not None:
                log.warning("job %s (%s) taken back from %s", job.id, job.task, due.taken_from)
            with self._lock:
                self._running.add(job.id)
            try:
                return job, find_task(job.task)
            except MisuseError as exc:
                self._finish(job.id, "failed", str(exc))
                with self._lock:
                    self._running.discard(job.id)

    def _context(self, job: StoredJob) -> JobContext:
        settings = self.settings
        return JobContext(
            store=self.store,
            job_id=str(job.id),
            attempt=job.attempts,
            max_attempts=job.max_attempts,
            provider=job.provider,
            send=limited_sender(self._limiter, job.provider, max_wait=settings.max_rate_limit_wait),
            limiter=self._limiter,
            environ=settings.environ(),
            timeout=settings.send_timeout,
        )

    def _run(self, job: StoredJob, task: Task) -> None:
        try:
            task.run(self._context(job), job.args)
        except Exception as exc:
            log.exception("job %s (%s) raised", job.id, job.task)
            error = f"{type(exc).__name__}: {exc}"[:2000]
            if job.attempts < job.max_attempts:
                run_after = _now_ms() + RETRY_BACKOFF_MS * job.attempts
                stored.retry_job(self.store.engine, job.id, self.worker, error=error, run_after=run_after)
            else:
                self._finish(job.id, "failed", error)
                self._give_up(job, error)
        else:
            self._finish(job.id, "succeeded", None)
        finally:
            with self._lock:
                self._running.discard(job.id)

    def _give_up(self, job: StoredJob, why: str) -> None:
        try:
            task = find_task(job.task)
            if task.on_give_up is not None:
                task.on_give_up(self._context(job), job.args, why)
        except Exception:
            log.exception("job %s (%s): recording its end failed", job.id, job.task)

    def _finish(self, job_id: int, status: JobStatus, error: str | None) -> None:
        stored.end_job(self.store.engine, job_id, self.worker, status=status, error=error, now=_now_ms())

    def _renew(self) -> None:
        """Extend the lease of this process's running jobs, a third of a lease apart."""
        lease_ms = int(self.settings.lease_seconds * 1000)
        while not self._stopping.wait(self.settings.lease_seconds / 3):
            with self._lock:
                ids = list(self._running)
            if not ids:
                continue
            try:
                stored.renew_leases(self.store.engine, ids, self.worker, until=_now_ms() + lease_ms)
            except Exception:
                log.exception("could not renew the job leases")


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


def _info(job: StoredJob) -> JobInfo:
    return JobInfo(str(job.id), job.task, job.provider, job.status, job.attempts, job.lock, job.args, job.error)
