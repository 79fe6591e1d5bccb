"""Running a suite run on the job queue: one job per conversation, then watching the store until every one ends.

The jobs are stored (the ``jobs`` table on SQLite, Procrastinate's on PostgreSQL) and run by the
queue's workers: this process's when it starts them, ``traceloupe worker`` processes on
PostgreSQL, ``serve``'s on either; the run's concurrency bounds its jobs running at once across all of
them (job lanes). Progress is read from the store, not from the workers, so it is
the same whichever process runs the jobs. A run interrupted (the process killed) keeps its
pending items and their stored jobs; :func:`enqueue_open` on it again queues nothing twice (each
job has a lock per item) and the run finishes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from core.jobs.queue import OPEN_STATUSES, JobQueue, NewJob
from core.store.suite_views import ItemView, Progress, SuiteRunView
from core.suites.api import Suites
from core.suites.tasks import SUITE_ITEM_TASK, lane_of, lock_of, lock_prefix

POLL_SECONDS = 0.2
LOST_CHECK_SECONDS = 5.0
"""How often the watcher checks that an item without an outcome still has a job."""


def enqueue_open(queue: JobQueue, suites: Suites, run: SuiteRunView) -> int:
    """Queue a job for every item of the run without an outcome; how many items that is.

    The jobs share the run's ``concurrency`` lanes: at most that many replay at once, whichever workers take them.
    """
    items = suites.open_items(run.run_id)
    jobs = [NewJob({"item": pk}, lock_of(run.run_id, pk), lane_of(run.run_id, pk, run.concurrency)) for pk in items]
    queue.enqueue_many(SUITE_ITEM_TASK, jobs, provider=run.provider)
    return len(items)


def watch(
    suites: Suites,
    queue: JobQueue,
    run_id: str,
    *,
    on_item: Callable[[ItemView, Progress], None] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    poll: float = POLL_SECONDS,
) -> SuiteRunView:
    """Wait until every item of the run has an outcome, reporting each as it ends; the finished run.

    An item whose job is gone (given up, cancelled, or its record lost) while the item still has no
    outcome is queued again once; the job's lock keeps a job that is still open from being doubled.
    """
    seen: set[int] = set()
    last: Progress | None = None
    next_check = time.monotonic() + LOST_CHECK_SECONDS
    while True:
        progress = suites.progress(run_id)
        if last is None or progress != last:
            for item in suites.items_done(run_id, exclude=seen):
                seen.add(item.item_pk)
                if on_item is not None:
                    on_item(item, progress)
            last = progress
        # The run is marked finished just after its last outcome commits, so progress may not change again.
        if progress.remaining == 0 and (run := suites.run(run_id)).status == "finished":
            if on_progress is not None:
                on_progress(progress)
            return run
        if on_progress is not None:
            on_progress(progress)
        if time.monotonic() >= next_check:
            _requeue_lost(queue, suites, run_id)
            next_check = time.monotonic() + LOST_CHECK_SECONDS
        time.sleep(poll)


def _requeue_lost(queue: JobQueue, suites: Suites, run_id: str) -> None:
    open_jobs = {job.lock for job in queue.jobs(lock_prefix=lock_prefix(run_id), statuses=OPEN_STATUSES)}
    still_open = suites.open_items(run_id)
    lost = [pk for pk in still_open if lock_of(run_id, pk) not in open_jobs]
    if lost:
        enqueue_open(queue, suites, suites.run(run_id))
    elif not still_open:
        suites.finish_if_done(run_id)
