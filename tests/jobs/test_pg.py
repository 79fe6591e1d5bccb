"""The PostgreSQL queue: `traceloupe worker` processes share the jobs, survive a `kill -9`, keep provider limits."""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from core.jobs import JobSettings, NewJob
from core.jobs.pg import ProcrastinateQueue
from core.jobs.replay_tasks import RUN_TASK
from core.replay.run import prepare, start
from core.store import Store
from tests.jobs.conftest import queue_run, running_workers, wait_for
from tests.replay.replay_data import CONVERSATION, seed_store
from tests.store.store_pg import pg_database
from web.devtools.stub_provider import Reply, StubServer

pytestmark = pytest.mark.postgres

SUCCESS = re.compile(r"Job run\[(\d+)\].* ended with status: Success")


@pytest.fixture
def pg_url(tmp_path: Path) -> Iterator[str]:
    """A fresh database, migrated (the store's schema and the queue's) and seeded."""
    with pg_database() as url:
        with Store.open(url) as store:
            seed_store(store, tmp_path)
        yield url


def _successes(log: Path) -> set[int]:
    return {int(m.group(1)) for m in SUCCESS.finditer(log.read_text(errors="replace"))}


@pytest.mark.slow
def test_two_workers_share_the_jobs_and_a_killed_one_loses_none(
    pg_url: str, stub: StubServer, stub_env: dict[str, str], tmp_path: Path
) -> None:
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    options = ("--stalled-after", "2", "--provider-limit", "openai=3")
    with running_workers(pg_url, stub_env, logs, *options) as workers, Store.open(pg_url) as store:
        queue = ProcrastinateQueue(store, JobSettings(embedded_worker=False))
        run_ids = [queue_run(store, queue, stub_env, "stub-slow-0.6") for _ in range(20)]
        wait_for(lambda: len(_successes(logs[0])) >= 2, 60, "worker a's first jobs")
        workers[0].send_signal(signal.SIGKILL)  # busy: 18 jobs wait, it took its next ones at once
        workers[0].wait()
        wait_for(lambda: all(store.get_run(r).status != "running" for r in run_ids), 90, "the runs")
        statuses = {store.get_run(r).status for r in run_ids}
        with store.engine.connect() as conn:
            jobs = conn.execute(text("SELECT status::text, attempts FROM procrastinate_jobs")).all()
            ends = conn.execute(
                text("SELECT job_id, count(*) FROM procrastinate_events WHERE type = 'succeeded' GROUP BY job_id")
            ).all()
        queue.stop()
    graceful = workers[1].returncode
    assert statuses == {"ok"}  # every run recorded its outcome; none is left running
    assert sorted(status for status, _ in jobs) == ["succeeded"] * 20
    assert len(ends) == 20 and all(count == 1 for _, count in ends)  # none ran to completion twice
    assert any(attempts >= 1 for _, attempts in jobs)  # the killed worker's jobs were taken back
    assert _successes(logs[0]) and _successes(logs[1])  # both workers ran jobs
    stats = httpx.get(f"{stub.base_url}/__stub/stats").json()
    assert 20 <= stats["requests"] <= 22  # at most the killed worker's two calls in flight were sent again
    assert stats["peak_in_flight"] <= 3  # four job slots, and the provider limit across both workers
    assert graceful == 0


def test_a_429_is_retried_after_its_retry_after(pg_url: str, stub: StubServer, stub_env: dict[str, str]) -> None:
    stub.state.script += [Reply(status=429, retry_after=1), Reply(text="after the wait")]
    with Store.open(pg_url) as store:
        settings = JobSettings(environ=lambda: stub_env, poll_seconds=0.1, max_rate_limit_wait=5)
        queue = ProcrastinateQueue(store, settings)
        run_id = queue_run(store, queue, stub_env, "m")
        started = time.monotonic()
        queue.start()
        try:
            wait_for(lambda: store.get_run(run_id).status != "running")
        finally:
            queue.stop()
        assert store.get_run(run_id).status == "ok"
        assert time.monotonic() - started >= 1.0
        assert queue.jobs()[0].status == "succeeded"
    assert len(stub.state.requests) == 2


def test_a_worker_runs_as_many_jobs_at_once_as_its_concurrency(
    pg_url: str, stub: StubServer, stub_env: dict[str, str]
) -> None:
    """Eight at once, more than the default executor's min(32, cores + 4) threads on a small machine."""
    with Store.open(pg_url) as store:
        queue = ProcrastinateQueue(store, JobSettings(concurrency=8, environ=lambda: stub_env, poll_seconds=0.1))
        run_ids = [queue_run(store, queue, stub_env, "stub-slow-1.5") for _ in range(8)]
        queue.start()
        try:
            wait_for(lambda: all(store.get_run(r).status != "running" for r in run_ids))
        finally:
            queue.stop()
    assert httpx.get(f"{stub.base_url}/__stub/stats").json() == {"requests": 8, "peak_in_flight": 8}


def test_jobs_queued_together_keep_one_open_job_per_lock(pg_url: str) -> None:
    with Store.open(pg_url) as store:
        queue = ProcrastinateQueue(store, JobSettings(embedded_worker=False))
        try:
            first = queue.enqueue("run", {"run_id": "a"}, provider="openai", lock="run:a")
            jobs = [NewJob({"run_id": "a"}, "run:a"), NewJob({"run_id": "b"}, "run:b"), NewJob({"run_id": "c"})]
            ids = queue.enqueue_many("run", jobs, provider="openai")
            assert ids[0] == first and len(set(ids)) == 3
            assert queue.enqueue_many("run", jobs[:2], provider="openai") == ids[:2]  # queued again: nothing added
            twice = [
                NewJob({"run_id": "d"}, "run:d"),
                NewJob({"run_id": "d"}, "run:d"),
            ]  # the batch fails, one at a time
            assert len(set(queue.enqueue_many("run", twice, provider="openai"))) == 1
            assert [j.lock for j in queue.jobs()] == ["run:a", "run:b", None, "run:d"]
        finally:
            queue.stop()


def test_the_next_job_of_a_lane_starts_when_the_lane_frees_not_at_the_next_poll(
    pg_url: str, stub: StubServer, stub_env: dict[str, str]
) -> None:
    """The worker's second fetch finds the lane busy and sleeps for its poll (a minute here): only the lane's
    wake-up (``core.store.procrastinate_tables``) can start the second job before that."""
    with Store.open(pg_url) as store:
        queue = ProcrastinateQueue(store, JobSettings(concurrency=2, environ=lambda: stub_env, poll_seconds=60))
        run_ids = []
        for _ in range(2):
            prepared = prepare(store, CONVERSATION, "openai", "stub-slow-0.3", environ=stub_env)
            run, _created = start(store, prepared)
            queue.enqueue(RUN_TASK, {"run_id": run.run_id, "timeout": 10}, provider="openai", lane="lane:one")
            run_ids.append(run.run_id)
        queue.start()
        try:
            wait_for(lambda: all(store.get_run(r).status != "running" for r in run_ids), 20, "the lane's two jobs")
        finally:
            queue.stop()
    assert httpx.get(f"{stub.base_url}/__stub/stats").json() == {"requests": 2, "peak_in_flight": 1}


def test_a_queue_stopped_as_soon_as_it_starts_stops(pg_url: str) -> None:
    """stop() right after start() used to find no worker loop yet, and waited for the worker forever."""
    with Store.open(pg_url) as store:
        for _ in range(3):
            queue = ProcrastinateQueue(store, JobSettings(poll_seconds=0.1))
            queue.start()
            stopper = threading.Thread(target=queue.stop, daemon=True)
            stopper.start()
            stopper.join(timeout=60)
            assert not stopper.is_alive()
