"""The PostgreSQL backend: Procrastinate's jobs on the store's own database, run by any number of workers.

Each registered task is a Procrastinate task of the same name taking ``provider`` and ``args``;
the job's queue is its provider, so ``pending(provider)`` and Procrastinate's tools see per-provider
backlogs. A ``lock`` is Procrastinate's queueing lock (one waiting job per lock) plus a look-up of
a running one, so a lock names at most one open job. A ``lane`` is Procrastinate's ``lock``: its
workers fetch no job while an older one of its lane is waiting or running.

Workers (``traceloupe worker``, or the one ``serve`` embeds) each hold a lock that says their
process is alive (``core.jobs.pg_liveness``); each also reaps, every third of ``lease_seconds``, the
jobs left ``doing`` by a worker whose process is gone (a ``kill -9``): retried while attempts remain,
else failed and handed to the task's ``on_give_up``. A live worker's jobs are never taken back,
whatever the settings of the others. A job that raises is retried by Procrastinate's retry strategy, with the
same bound. Per-provider limits are advisory locks (``core.jobs.limits.AdvisoryLimiter``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import weakref
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import procrastinate
import psycopg_pool
from procrastinate import exceptions as pexc
from procrastinate.jobs import Status

from core.jobs.limits import AdvisoryLimiter, Limiter, limited_sender
from core.jobs.pg_liveness import LiveJobManager, open_liveness
from core.jobs.queue import JSON, JobId, JobInfo, JobSettings, JobStatus, NewJob
from core.jobs.registry import TASKS, JobContext, Task, find_task, load_tasks
from core.store import Store
from core.store import procrastinate_tables as beneath
from core.store.advisory_locks import SessionLocks
from core.store.engine import PING_AFTER_IDLE_SECONDS

log = logging.getLogger("traceloupe.jobs")

STATUS_OF: dict[str, JobStatus] = {
    "todo": "pending",
    "doing": "running",
    "aborting": "running",
    "succeeded": "succeeded",
    "failed": "failed",
    "cancelled": "cancelled",
    "aborted": "cancelled",
}
_OPEN = ("todo", "doing", "aborting")


def conninfo(store: Store) -> str:
    """The store's URL as libpq reads it (without SQLAlchemy's driver suffix)."""
    return store.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


class ProcrastinateQueue:
    """The job queue over a PostgreSQL store (see the module docstring)."""

    backend: Literal["sqlite", "postgresql"] = "postgresql"

    def __init__(self, store: Store, settings: JobSettings | None = None) -> None:
        self.store = store
        self.settings = settings or JobSettings()
        self._slots = SessionLocks(store.engine, self.settings.concurrency)
        self._limiter: Limiter = AdvisoryLimiter(self._slots, self.settings.provider_limits)
        self._sync_app = self._app(procrastinate.SyncPsycopgConnector(conninfo=conninfo(store)))
        self._sync_app.open()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        # Set by stop() before it looks for the worker's loop: a worker that starts after that stops at once.
        self._stopping = threading.Event()

    # -- the interface -----------------------------------------------------

    def enqueue(
        self, task: str, args: Mapping[str, JSON], *, provider: str, lock: str | None = None, lane: str | None = None
    ) -> JobId:
        find_task(task)
        if lock is not None:
            open_id = self._open_jobs([lock]).get(lock)
            if open_id is not None:
                return open_id
        deferrer = self._sync_app.configure_task(task, queue=provider, queueing_lock=lock, lock=lane)
        try:
            return str(deferrer.defer(provider=provider, args=dict(args)))
        except pexc.AlreadyEnqueued:
            found = self._open_jobs([lock]).get(lock) if lock is not None else None
            if found is None:
                raise
            return found

    def enqueue_many(self, task: str, jobs: Sequence[NewJob], *, provider: str) -> list[JobId]:
        find_task(task)
        open_ids = self._open_jobs([job.lock for job in jobs if job.lock is not None])
        new = [
            self._sync_app.configure_task(task, queue=provider, queueing_lock=job.lock, lock=job.lane).make_new_job(
                provider=provider, args=dict(job.args)
            )
            for job in jobs
            if job.lock is None or job.lock not in open_ids
        ]
        try:
            deferred = iter(self._sync_app.job_manager.batch_defer_jobs(new) if new else [])
        except pexc.AlreadyEnqueued:  # a lock taken meanwhile (or twice in ``jobs``): nothing was queued
            return [self.enqueue(task, j.args, provider=provider, lock=j.lock, lane=j.lane) for j in jobs]
        return [
            open_ids[job.lock] if job.lock is not None and job.lock in open_ids else str(next(deferred).id)
            for job in jobs
        ]

    def start(self) -> None:
        if self._thread is not None or not self.settings.embedded_worker:
            return
        self._stopping.clear()
        self._thread = threading.Thread(target=self._serve_embedded, name="job-worker", daemon=True)
        self._thread.start()

    def stop(self, *, wait: bool = True) -> None:
        self._stopping.set()
        loop, event = self._loop, self._stop_event
        if loop is not None and event is not None:
            with contextlib.suppress(RuntimeError):  # the worker's loop closed meanwhile: it has stopped already
                loop.call_soon_threadsafe(event.set)
        if wait and self._thread is not None:
            self._thread.join()
        self._thread = None
        self._sync_app.close()
        self._slots.close()

    def pending(self, provider: str | None = None, *, task: str | None = None) -> int:
        return beneath.count_open_jobs(self.store.engine, queue=provider, task=task)

    def jobs(self, *, lock_prefix: str | None = None, statuses: Collection[JobStatus] | None = None) -> list[JobInfo]:
        found = [
            JobInfo(
                job_id=str(job.id),
                task=job.task_name,
                provider=job.queue_name,
                status=STATUS_OF[job.status],
                attempts=job.attempts,
                lock=job.queueing_lock,
                args=dict(job.args.get("args") or {}),
            )
            for job in beneath.jobs_by_lock_prefix(self.store.engine, lock_prefix)
        ]
        return found if statuses is None else [j for j in found if j.status in statuses]

    def cancel(self, job_id: JobId) -> bool:
        return bool(self._sync_app.job_manager.cancel_job_by_id(int(job_id)))

    # -- workers -----------------------------------------------------------

    async def run_worker(self, *, install_signal_handlers: bool = False) -> None:
        """Run a worker (and its stalled-job reaper) until :meth:`stop` or a signal; ``traceloupe worker``."""
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        if self._stopping.is_set():  # stop() came before this loop existed
            self._stop_event.set()
        # Procrastinate runs a sync task on the loop's default executor, whose default size is
        # min(32, cores + 4): on a small machine that, not ``concurrency``, would bound the jobs at once.
        self._loop.set_default_executor(
            ThreadPoolExecutor(max_workers=self.settings.concurrency + 2, thread_name_prefix="job")
        )
        connector = procrastinate.PsycopgConnector(conninfo=conninfo(self.store), pool_factory=_pool)
        app = self._app(connector)
        lease = self.settings.lease_seconds
        liveness = await open_liveness(conninfo(self.store), lease)
        manager = app.job_manager = LiveJobManager(connector, liveness)
        try:
            async with app.open_async():
                worker = asyncio.create_task(
                    app.run_worker_async(
                        concurrency=self.settings.concurrency,
                        install_signal_handlers=install_signal_handlers,
                        fetch_job_polling_interval=self.settings.poll_seconds,
                        update_heartbeat_interval=lease / 3,
                        stalled_worker_timeout=lease,
                        name="traceloupe",
                    )
                )
                reaper = asyncio.create_task(self._reap(manager))
                stopper = asyncio.create_task(self._stop_event.wait())
                await asyncio.wait({worker, stopper}, return_when=asyncio.FIRST_COMPLETED)
                reaper.cancel()
                stopper.cancel()
                if not worker.done():
                    worker.cancel()  # Procrastinate stops gracefully: the jobs in flight finish first
                await asyncio.gather(worker, reaper, stopper, return_exceptions=True)
        finally:
            self._loop = self._stop_event = None
            await liveness.close()  # after the worker unregistered: its lock ends with its row

    def _serve_embedded(self) -> None:
        try:
            asyncio.run(self.run_worker())
        except Exception:
            log.exception("the embedded job worker stopped")

    async def _reap(self, manager: LiveJobManager) -> None:
        lease = self.settings.lease_seconds
        while True:
            await asyncio.sleep(lease / 3)
            try:
                await self._reap_once(manager)
            except Exception:
                log.exception("could not look for the jobs of workers that are gone")

    async def _reap_once(self, manager: LiveJobManager) -> None:
        await manager.prune_stalled_workers(0)
        for job in await manager.abandoned_jobs():
            assert job.id is not None
            try:
                if job.attempts + 1 >= self.settings.max_attempts:
                    await manager.finish_job_by_id_async(job.id, status=Status.FAILED, delete_job=False)
                    why = f"its worker stopped while running it ({job.attempts + 1} attempt(s))"
                    log.warning("job %s (%s) given up: %s", job.id, job.task_name, why)
                    await asyncio.to_thread(self._give_up, job.task_name, job, why)
                else:
                    await manager.retry_job_by_id_async(job.id, retry_at=_now())
                    log.warning("job %s (%s) taken back from a worker that is gone", job.id, job.task_name)
            except pexc.ConnectorException:
                pass  # another worker's reaper got there first

    # -- tasks -------------------------------------------------------------

    def _app(self, connector: Any) -> procrastinate.App:
        app = procrastinate.App(connector=connector)
        load_tasks()
        retry: procrastinate.RetryStrategy | bool = (
            procrastinate.RetryStrategy(max_attempts=self.settings.max_attempts - 1, wait=1)
            if self.settings.max_attempts > 1
            else False
        )
        for name, registered in TASKS.items():
            app.task(name=name, pass_context=True, retry=retry)(self._wrapper(registered))
        return app

    def _wrapper(self, registered: Task) -> Any:
        def run(context: procrastinate.JobContext, *, provider: str, args: dict[str, JSON]) -> None:
            job = context.job
            ctx = self._context(job, provider)
            try:
                registered.run(ctx, args)
            except Exception as exc:
                if job.attempts + 1 >= self.settings.max_attempts and registered.on_give_up is not None:
                    registered.on_give_up(ctx, args, f"{type(exc).__name__}: {exc}"[:2000])
                raise

        return run

    def _context(self, job: Any, provider: str) -> JobContext:
        settings = self.settings
        return JobContext(
            store=self.store,
            job_id=str(job.id),
            attempt=int(job.attempts) + 1,
            max_attempts=settings.max_attempts,
            provider=provider,
            environ=settings.environ(),
            timeout=settings.send_timeout,
            send=limited_sender(self._limiter, provider, max_wait=settings.max_rate_limit_wait),
            limiter=self._limiter,
        )

    def _give_up(self, task_name: str, job: Any, why: str) -> None:
        registered = TASKS.get(task_name)
        if registered is None or registered.on_give_up is None:
            return
        kwargs = job.task_kwargs
        provider = str(kwargs.get("provider", ""))
        try:
            registered.on_give_up(self._context(job, provider), dict(kwargs.get("args") or {}), why)
        except Exception:
            log.exception("job %s (%s): recording its end failed", job.id, task_name)

    def _open_jobs(self, locks: Collection[str]) -> dict[str, JobId]:
        """The open job of each lock that has one."""
        return {lock: str(job_id) for lock, job_id in beneath.open_jobs_by_lock(self.store.engine, locks).items()}


class _IdleCheck:
    """Procrastinate's pool checks every connection it hands out (a round trip per query); this checks only one
    that sat idle ``PING_AFTER_IDLE_SECONDS`` or more, as ``core.store.engine.ping_when_idle`` does."""

    def __init__(self) -> None:
        self._returned: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()

    async def returned(self, conn: Any) -> None:
        self._returned[conn] = time.monotonic()

    async def check(self, conn: Any) -> None:
        returned = self._returned.get(conn)  # None: connected just now
        if returned is not None and time.monotonic() - returned >= PING_AFTER_IDLE_SECONDS:
            await psycopg_pool.AsyncConnectionPool.check_connection(conn)


def _pool(**kwargs: Any) -> psycopg_pool.AsyncConnectionPool:
    """Procrastinate's pool, its connections checked when idle only and in autocommit: each of its queries
    is one statement (a function call), which a BEGIN and a COMMIT around it would cost two round trips more."""
    idle = _IdleCheck()
    return psycopg_pool.AsyncConnectionPool(
        **{**kwargs, "check": idle.check, "reset": idle.returned, "configure": _autocommit}
    )


async def _autocommit(conn: Any) -> None:
    await conn.set_autocommit(True)


def _now() -> Any:
    import datetime

    return datetime.datetime.now(datetime.UTC)
