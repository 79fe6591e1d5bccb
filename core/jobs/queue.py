"""The one queue interface: what a caller enqueues, what a worker runs, and the settings both share.

A job is a task name, JSON arguments and the provider it calls. ``JobQueue.enqueue`` stores it
(in the ``jobs`` table on SQLite, in Procrastinate's tables on PostgreSQL) and returns its id;
a worker runs the task function registered under that name (``core.jobs.registry``). A job is
run at least once: after a worker dies it runs again, so every task must be idempotent to a retry.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol

from core.errors import MisuseError
from core.store.job_queue import OPEN_STATUSES as OPEN_STATUSES  # a job's states are the store's (both backends)
from core.store.job_queue import JobStatus as JobStatus

JSON = Any
"""A JSON value (``None``, bool, number, str, list, str-keyed dict): what a job's arguments hold."""

JobId = str
"""A job's id, unique within its backend (the row id as text)."""


LIMITS_VAR = "TRACELOUPE_PROVIDER_LIMITS"
"""``openai=4,anthropic=2``: provider calls in flight at once, per provider, across the workers that read it."""


@dataclass(frozen=True, slots=True)
class JobInfo:
    """One job as every process sees it."""

    job_id: JobId
    task: str
    provider: str
    status: JobStatus
    attempts: int
    lock: str | None
    args: dict[str, JSON]
    error: str | None = None


@dataclass(frozen=True, slots=True)
class JobSettings:
    """How a queue runs its jobs; the defaults suit one ``serve`` process."""

    concurrency: int = 2
    """Jobs this process runs at once (worker threads, or a Procrastinate worker's concurrency)."""
    provider_limits: Mapping[str, int] = field(default_factory=dict)
    """Provider calls in flight at once per provider, held across every worker of the database on PostgreSQL
    (advisory locks) and within the process on SQLite. A provider not named is bounded by ``concurrency`` only."""
    max_rate_limit_wait: float = 60.0
    """Seconds a job may spend waiting out 429s (each wait is the provider's retry-after) before the 429 stands."""
    max_attempts: int = 3
    """Runs of a job, first included, before it is recorded as failed (a crash, an exception, a lost worker)."""
    lease_seconds: float = 30.0
    """SQLite: a running job whose worker has not renewed its lease for this long is taken back."""
    poll_seconds: float = 0.5
    """How often an idle worker looks for jobs enqueued by other processes."""
    send_timeout: float = 120.0
    """Seconds a provider has to answer one request."""
    embedded_worker: bool = True
    """PostgreSQL: ``start()`` also runs a worker in this process (``serve`` alone keeps replaying);
    ``traceloupe worker`` processes run jobs too."""
    environ: Callable[[], Mapping[str, str]] = lambda: os.environ
    """Where a task reads provider keys and endpoints, at each job (never from the job's arguments)."""

    def __post_init__(self) -> None:
        if self.concurrency < 1 or self.max_attempts < 1:
            raise MisuseError("a queue needs concurrency >= 1 and max_attempts >= 1")
        if any(n < 1 for n in self.provider_limits.values()):
            raise MisuseError("a provider limit is at least 1")


MAX_LIMIT = 10_000
"""The most calls a provider limit lets be in flight: past any provider's own concurrency."""


def parse_limits(text: str) -> dict[str, int]:
    """``openai=4,anthropic=2`` (the ``--provider-limit`` values or ``$TRACELOUPE_PROVIDER_LIMITS``) as a dict."""
    limits: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, count = item.partition("=")
        count = count.strip()
        if not sep or not name.strip() or not count.isdigit() or len(count) > 6 or not 1 <= int(count) <= MAX_LIMIT:
            raise MisuseError(f"a provider limit reads PROVIDER=N with N from 1 to {MAX_LIMIT:,}, not {item[:80]!r}")
        limits[name.strip()] = int(count)
    return limits


class NewJob(NamedTuple):
    """One job of an :meth:`JobQueue.enqueue_many` batch: ``enqueue``'s arguments, ``lock`` and ``lane``."""

    args: Mapping[str, JSON]
    lock: str | None = None
    lane: str | None = None


class JobQueue(Protocol):
    """Jobs stored in the database and run by workers; every method is safe from any thread."""

    backend: Literal["sqlite", "postgresql"]

    def enqueue(
        self, task: str, args: Mapping[str, JSON], *, provider: str, lock: str | None = None, lane: str | None = None
    ) -> JobId:
        """Store a job for ``task`` and return its id.

        ``lock``: while a job with the same lock is pending or running, that job's id is returned and
        nothing new is queued (a double click, a retried request, a suite run resumed).
        ``lane``: the jobs of one lane run one at a time, oldest first, across every worker (a suite run
        of concurrency N spreads its jobs over N lanes); a job waiting for its lane holds no worker.
        Raises UnknownNameError for a task no module registered.
        """
        ...

    def enqueue_many(self, task: str, jobs: Sequence[NewJob], *, provider: str) -> list[JobId]:
        """``enqueue`` for each of ``jobs``, in one transaction where it can; their ids in order.

        A suite run queues a job per conversation: one at a time, the queueing could not keep up with the workers.
        """
        ...

    def start(self) -> None:
        """Start this process's workers (idempotent). Jobs left by a dead process are taken back."""
        ...

    def stop(self, *, wait: bool = True) -> None:
        """Stop taking jobs; with ``wait``, let the jobs in flight finish first."""
        ...

    def pending(self, provider: str | None = None, *, task: str | None = None) -> int:
        """Jobs pending or running in every process (of one provider, of one task, when given)."""
        ...

    def jobs(self, *, lock_prefix: str | None = None, statuses: Collection[JobStatus] | None = None) -> list[JobInfo]:
        """Jobs whose lock starts with ``lock_prefix`` (a suite run's jobs), oldest first."""
        ...

    def cancel(self, job_id: JobId) -> bool:
        """Cancel a job that has not started; True when it was pending and is now cancelled."""
        ...
