"""The SQLite queue: jobs persist across a restart, a lost worker's job is taken back, provider limits hold."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx
import pytest
from sqlalchemy import update

from core.jobs import JSON, JobContext, JobSettings, NewJob, register
from core.jobs import local as local_module
from core.jobs.local import LocalQueue
from core.jobs.replay_tasks import STEP_RUN_TASK
from core.replay.steps import plan_steps, start_steps
from core.store import Store
from core.store.engine import write_transaction
from core.store.step_runs import StepView
from core.store.tables import JOBS
from tests.jobs.conftest import queue_run, wait_for
from tests.replay.replay_data import seed_store
from tests.replay.steps_data import CALLS, FINAL_TEXT, STEPS_CONVERSATION, seed_steps
from web.devtools.stub_provider import Reply, StubServer


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "jobs.db")
    with Store.open(path) as store:
        seed_store(store, tmp_path)
        seed_steps(store, tmp_path)
    return path


@pytest.fixture
def store(db: str) -> Iterator[Store]:
    with Store.open(db) as opened:
        yield opened


def _settings(env: dict[str, str], **kw: object) -> JobSettings:
    return JobSettings(environ=lambda: env, poll_seconds=0.05, **kw)  # type: ignore[arg-type]


def _finished(store: Store, run_ids: list[str]) -> bool:
    return all(store.get_run(r).status != "running" for r in run_ids)


def test_a_job_queued_before_a_restart_runs_after_it(db: str, stub: StubServer, stub_env: dict[str, str]) -> None:
    with Store.open(db) as before:
        gone = LocalQueue(before, _settings(stub_env))  # never started: the process ends with the job pending
        run_id = queue_run(before, gone, stub_env, "m")
        assert gone.pending() == 1
    del gone
    with Store.open(db) as after:
        queue = LocalQueue(after, _settings(stub_env))
        queue.start()
        try:
            wait_for(lambda: _finished(after, [run_id]))
        finally:
            queue.stop()
        assert after.get_run(run_id).status == "ok"
        assert [(j.status, j.attempts) for j in queue.jobs()] == [("succeeded", 1)]
        assert queue.pending() == 0
    assert len(stub.state.requests) == 1


def test_two_queues_with_different_leases_never_take_back_each_other_s_live_jobs(
    db: str, stub: StubServer, stub_env: dict[str, str]
) -> None:
    """A running job's lease is its holder's own (the holder sets and renews it), so a queue with a short lease
    beside one with a long lease (two processes on one SQLite file) never takes a live job: one call per job."""
    with Store.open(db) as first, Store.open(db) as second:
        patient = LocalQueue(first, _settings(stub_env, concurrency=2, lease_seconds=30))
        eager = LocalQueue(second, _settings(stub_env, concurrency=2, lease_seconds=0.3))
        run_ids = [queue_run(first, patient, stub_env, "stub-slow-1.0") for _ in range(6)]
        patient.start()
        eager.start()
        try:
            wait_for(lambda: _finished(first, run_ids), 60)
        finally:
            patient.stop()
            eager.stop()
        assert {first.get_run(r).status for r in run_ids} == {"ok"}
        assert sorted((j.status, j.attempts) for j in patient.jobs()) == [("succeeded", 1)] * 6
    assert len(stub.state.requests) == 6


def _lose(store: Store, attempts: int, lease_until: int) -> None:
    """Leave every job as a worker that died mid-run would: running, its lease whatever it last renewed."""
    with write_transaction(store.engine) as conn:
        conn.execute(
            update(JOBS).values(status="running", worker="gone:1:dead", attempts=attempts, lease_until=lease_until)
        )


def test_a_running_job_whose_lease_expired_is_taken_back(
    store: Store, stub: StubServer, stub_env: dict[str, str]
) -> None:
    queue = LocalQueue(store, _settings(stub_env, max_attempts=3))
    run_id = queue_run(store, queue, stub_env, "m")
    _lose(store, attempts=1, lease_until=int(time.time() * 1000) + 60_000)
    assert not queue.run_one()  # its lease still runs: the worker may be alive
    _lose(store, attempts=1, lease_until=int(time.time() * 1000) - 1)
    assert queue.run_one()
    assert store.get_run(run_id).status == "ok"
    assert [(j.status, j.attempts) for j in queue.jobs()] == [("succeeded", 2)]


def test_a_job_lost_on_its_last_attempt_ends_its_run_as_failed(store: Store, stub_env: dict[str, str]) -> None:
    queue = LocalQueue(store, _settings(stub_env, max_attempts=2))
    run_id = queue_run(store, queue, stub_env, "m")
    _lose(store, attempts=2, lease_until=int(time.time() * 1000) - 1)
    assert not queue.run_one()
    [job] = queue.jobs()
    assert job.status == "failed" and "stopped while running it" in (job.error or "")
    run = store.get_run(run_id)
    assert run.status == "error" and "given up" in (run.error or "")


def test_a_job_that_raises_is_retried_then_failed(
    store: Store, stub_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_module, "RETRY_BACKOFF_MS", 0)
    seen: list[tuple[int, str | None]] = []

    def flaky(ctx: JobContext, args: Mapping[str, JSON]) -> None:
        seen.append((ctx.attempt, None))
        raise RuntimeError(f"attempt {ctx.attempt} failed")

    def gave_up(ctx: JobContext, args: Mapping[str, JSON], why: str) -> None:
        seen.append((ctx.attempt, why))

    register("test_flaky", flaky, on_give_up=gave_up)
    queue = LocalQueue(store, _settings(stub_env, max_attempts=2))
    queue.enqueue("test_flaky", {}, provider="openai")
    assert queue.run_one() and queue.run_one() and not queue.run_one()
    assert seen == [(1, None), (2, None), (2, "RuntimeError: attempt 2 failed")]
    [job] = queue.jobs()
    assert (job.status, job.attempts) == ("failed", 2)


def test_a_lock_names_one_open_job(store: Store, stub_env: dict[str, str]) -> None:
    queue = LocalQueue(store, _settings(stub_env))
    first = queue_run(store, queue, stub_env, "m")
    job = queue.jobs()[0]
    assert queue.enqueue("run", {"run_id": first}, provider="openai", lock=f"run:{first}") == job.job_id
    assert queue.cancel(job.job_id) and not queue.cancel(job.job_id)
    again = queue.enqueue("run", {"run_id": first}, provider="openai", lock=f"run:{first}")
    assert again != job.job_id
    assert [j.status for j in queue.jobs(lock_prefix="run:")] == ["cancelled", "pending"]


def test_jobs_queued_together_keep_one_open_job_per_lock(store: Store, stub_env: dict[str, str]) -> None:
    queue = LocalQueue(store, _settings(stub_env))
    first = queue_run(store, queue, stub_env, "m")
    [open_job] = queue.jobs()
    jobs = [
        NewJob({"run_id": first}, f"run:{first}"),
        NewJob({"run_id": "other"}, "run:other"),
        NewJob({"run_id": "x"}),
    ]
    ids = queue.enqueue_many("run", jobs, provider="openai")
    assert ids[0] == open_job.job_id and len(set(ids)) == 3
    assert queue.enqueue_many("run", jobs[:2], provider="openai") == ids[:2]  # queued again: nothing added
    assert [(j.job_id, j.lock) for j in queue.jobs()] == [(i, lock) for i, (_, lock, _) in zip(ids, jobs, strict=True)]


@pytest.mark.parametrize("limit", [2, None])
def test_the_provider_limit_bounds_the_calls_in_flight(
    store: Store, stub: StubServer, stub_env: dict[str, str], limit: int | None
) -> None:
    limits = {"openai": limit} if limit is not None else {}
    queue = LocalQueue(store, _settings(stub_env, concurrency=6, provider_limits=limits))
    run_ids = [queue_run(store, queue, stub_env, "stub-slow-0.4") for _ in range(8)]
    queue.start()
    try:
        wait_for(lambda: _finished(store, run_ids))
    finally:
        queue.stop()
    assert {store.get_run(r).status for r in run_ids} == {"ok"}
    stats = httpx.get(f"{stub.base_url}/__stub/stats").json()
    assert stats["requests"] == 8
    if limit is not None:
        assert stats["peak_in_flight"] == limit
    else:  # the control: six threads and no limit do overlap more than two calls
        assert stats["peak_in_flight"] > 2


@pytest.mark.parametrize(("budget", "status", "requests"), [(5.0, "ok", 2), (0.5, "rate_limited", 1)])
def test_a_429_is_retried_after_its_retry_after_within_the_budget(
    store: Store, stub: StubServer, stub_env: dict[str, str], budget: float, status: str, requests: int
) -> None:
    stub.state.script += [Reply(status=429, retry_after=1), Reply(text="after the wait")]
    queue = LocalQueue(store, _settings(stub_env, max_rate_limit_wait=budget))
    run_id = queue_run(store, queue, stub_env, "m")
    started = time.monotonic()
    assert queue.run_one()
    run = store.get_run(run_id)
    assert run.status == status and len(stub.state.requests) == requests
    assert (time.monotonic() - started >= 1.0) == (requests == 2)


def _queue_step_run(store: Store, queue: LocalQueue, env: dict[str, str]) -> str:
    plan = plan_steps(store, STEPS_CONVERSATION, "openai", "gpt-4o", environ=env)
    run, created = start_steps(store, plan)
    assert created
    queue.enqueue(STEP_RUN_TASK, {"run_id": run.run_id, "timeout": 10}, provider="openai", lock=f"step:{run.run_id}")
    return run.run_id


def _identical(stub: StubServer) -> None:
    steps = [*({"text": "", "tool_calls": calls} for calls in CALLS), {"text": FINAL_TEXT}]
    stub.state.script_steps("gpt-4o", steps)


def test_a_step_run_job_runs_the_steps(store: Store, stub: StubServer, stub_env: dict[str, str]) -> None:
    queue = LocalQueue(store, _settings(stub_env))
    run_id = _queue_step_run(store, queue, stub_env)
    _identical(stub)
    assert queue.run_one()
    run = store.get_step_run(run_id)
    assert run.status == "matched" and [s.verdict for s in run.steps] == ["same", "same", "same", "same_final"]


def test_a_step_run_taken_back_midway_starts_again_from_step_1(
    store: Store, stub: StubServer, stub_env: dict[str, str]
) -> None:
    queue = LocalQueue(store, _settings(stub_env))
    run_id = _queue_step_run(store, queue, stub_env)
    half = StepView(
        index=1, recorded_msg_id="sa-1", verdict="same", reason=None, detail=None, status="ok", error=None,
        request_body={}, response_body=None, reply=None, latency_ms=1, input_tokens=None, output_tokens=None,
        cached_tokens=None, reasoning_tokens=None, cost_usd=None, cost_note=None, estimate=None,
    )  # fmt: skip
    store.add_step(run_id, half)  # what the dead worker recorded before it died
    _lose(store, attempts=1, lease_until=int(time.time() * 1000) - 1)
    _identical(stub)
    assert queue.run_one()
    run = store.get_step_run(run_id)
    assert run.status == "matched" and [s.index for s in run.steps] == [1, 2, 3, 4]
    assert len(stub.state.requests) == 4


def test_a_job_of_a_dead_process_on_this_host_is_taken_back_without_waiting_for_its_lease(
    store: Store, stub_env: dict[str, str]
) -> None:
    queue = LocalQueue(store, _settings(stub_env))
    run_id = queue_run(store, queue, stub_env, "m")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    far = int(time.time() * 1000) + 600_000
    with write_transaction(store.engine) as conn:  # alive: the test's parent process
        conn.execute(update(JOBS).values(status="running", worker=f"{socket.gethostname()}:{os.getppid()}:t"))
        conn.execute(update(JOBS).values(lease_until=far, attempts=1))
    assert queue.expire_dead_leases() == 0 and not queue.run_one()
    with write_transaction(store.engine) as conn:
        conn.execute(update(JOBS).values(worker=f"{socket.gethostname()}:{gone.pid}:t"))
    assert queue.expire_dead_leases() == 1 and queue.run_one()
    assert store.get_run(run_id).status == "ok"


KILLED_SERVER = """
import sys, time
from core.jobs import JobSettings
from core.jobs.local import LocalQueue
from core.store import Store
from tests.jobs.conftest import queue_run
env = {"OPENAI_API_KEY": sys.argv[2], "OPENAI_BASE_URL": sys.argv[3]}
store = Store.open(sys.argv[1])
queue = LocalQueue(store, JobSettings(environ=lambda: env, poll_seconds=0.05, concurrency=2))
for _ in range(4):
    queue_run(store, queue, env, "stub-slow-1")
queue.start()
time.sleep(600)
"""


def test_a_killed_process_s_jobs_all_finish_after_a_restart(
    db: str, stub: StubServer, stub_env: dict[str, str]
) -> None:
    argv = [sys.executable, "-c", KILLED_SERVER, db, stub_env["OPENAI_API_KEY"], stub_env["OPENAI_BASE_URL"]]
    server = subprocess.Popen(argv, cwd=Path(__file__).parents[2])
    try:
        wait_for(lambda: len(stub.state.requests) >= 2, 60, "the first process's first calls")
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()
    with Store.open(db) as store:
        queue = LocalQueue(store, _settings(stub_env))
        assert [j.status for j in queue.jobs()] == ["running", "running", "pending", "pending"]
        queue.start()
        try:
            wait_for(lambda: queue.pending() == 0, 60, "the jobs after the restart")
        finally:
            queue.stop()
        assert [(j.status, j.attempts) for j in queue.jobs()] == [("succeeded", 2)] * 2 + [("succeeded", 1)] * 2
        runs, _ = store.list_runs()
        assert len(runs) == 4 and {r.status for r in runs} == {"ok"}


def test_jobs_that_ended_long_ago_are_pruned_at_start_except_failed_ones(
    store: Store, stub_env: dict[str, str]
) -> None:
    queue = LocalQueue(store, _settings(stub_env))
    ids = [queue.enqueue("run", {"run_id": str(i)}, provider="openai") for i in range(3)]
    long_ago = int(time.time() * 1000) - local_module.KEEP_FINISHED_MS - 1
    with write_transaction(store.engine) as conn:
        for job_id, status in zip(ids, ("succeeded", "cancelled", "failed"), strict=True):
            conn.execute(update(JOBS).where(JOBS.c.id == int(job_id)).values(status=status, finished_at=long_ago))
    queue.start()
    queue.stop()
    assert [j.status for j in queue.jobs()] == ["failed"]
