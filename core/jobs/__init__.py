"""The job queue: single replays, step replays and suite jobs go through one interface, two backends.

::

    from core.jobs import JobSettings, queue_for, task

    @task("suite_item", on_give_up=record_failed)      # fn(ctx: JobContext, args: Mapping[str, JSON]) -> None
    def suite_item(ctx, args): ...                     # idempotent: it may run again after a worker dies

    queue = queue_for(store, JobSettings(concurrency=8, provider_limits={"openai": 4}))
    queue.start()                                      # this process's workers (SQLite: threads)
    job_id = queue.enqueue("suite_item", {"suite_run": "...", "conversation": "c1"},
                           provider="openai", lock="suite:RUN:c1",   # same lock while open: same job
                           lane="suite-lane:RUN:0")                  # one job of a lane runs at a time
    queue.pending(task="suite_item")                   # pending + running, every process
    queue.jobs(lock_prefix="suite:RUN:")               # JobInfo per job: status, attempts, error
    queue.cancel(job_id)                               # True if it had not started
    queue.stop()

- **SQLite** (``core.jobs.local``): the ``jobs`` table (revision 0006) and a thread pool in this
  process. A restart resumes pending jobs; a running job whose worker stopped renewing its lease
  is taken back, or recorded as failed once ``max_attempts`` runs are spent.
- **PostgreSQL** (``core.jobs.pg``): Procrastinate on the store's database (``traceloupe db upgrade``
  applies its schema). ``traceloupe worker`` processes on any machine run jobs; ``serve`` embeds one
  unless ``embedded_worker`` is off. Stalled jobs (a worker's ``kill -9``) are retried, then failed.

Inside a task, ``ctx.send`` is the provider call to use: it holds one of the provider's slots
(``provider_limits``, across every worker on PostgreSQL) and waits out a 429 for the retry-after
the provider sent, up to ``max_rate_limit_wait`` seconds per job. Tasks are found by name in
``core.jobs.registry.TASKS``; a module defining tasks adds itself to ``TASK_MODULES`` so workers
import it. The built-in tasks are ``run`` and ``step_run`` (``core.jobs.replay_tasks``).
"""

from __future__ import annotations

import os

from core.jobs.queue import (
    JSON,
    LIMITS_VAR,
    OPEN_STATUSES,
    JobId,
    JobInfo,
    JobQueue,
    JobSettings,
    JobStatus,
    NewJob,
    parse_limits,
)
from core.jobs.registry import TASK_MODULES, TASKS, JobContext, Task, find_task, register, task
from core.store import Store

__all__ = [
    "JSON",
    "LIMITS_VAR",
    "OPEN_STATUSES",
    "TASKS",
    "TASK_MODULES",
    "JobContext",
    "JobId",
    "JobInfo",
    "JobQueue",
    "JobSettings",
    "JobStatus",
    "NewJob",
    "Task",
    "env_limits",
    "find_task",
    "parse_limits",
    "queue_for",
    "register",
    "task",
]


def env_limits() -> dict[str, int]:
    """The provider limits in ``$TRACELOUPE_PROVIDER_LIMITS`` (empty when unset)."""
    return parse_limits(os.environ.get(LIMITS_VAR, ""))


def queue_for(store: Store, settings: JobSettings | None = None) -> JobQueue:
    """The queue of ``store``'s backend: the in-process pool on SQLite, Procrastinate on PostgreSQL."""
    if store.db.serves_job_queue:
        from core.jobs.pg import ProcrastinateQueue  # imports Procrastinate only where it is used

        return ProcrastinateQueue(store, settings)
    from core.jobs.local import LocalQueue

    return LocalQueue(store, settings)
