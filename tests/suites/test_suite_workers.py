"""A suite run on PostgreSQL shared by two `traceloupe worker` processes, one of them killed with `kill -9` midway:
every conversation still ends with one recorded outcome, none is left `running`, and none ran twice to completion."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from core.jobs import JobSettings
from core.jobs.pg import ProcrastinateQueue
from core.store import Store
from core.suites import Suites
from core.suites.runner import enqueue_open
from tests.jobs.conftest import running_workers, wait_for
from tests.store.store_pg import pg_database
from tests.suites import suite_data
from web.devtools.stub_provider import StubServer

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

COUNT = 24
SLOTS = 4
"""Two workers of concurrency 2, and the suite run's concurrency: every job slot of both workers in use."""


@pytest.fixture
def pg_url(tmp_path: Path) -> Iterator[str]:
    """A fresh migrated database holding suite ``kill`` of COUNT conversations."""
    with pg_database() as url:
        with Store.open(url) as store:
            ids = suite_data.seed(store, tmp_path, COUNT)
            Suites(store).create("kill", conversations=ids)
        yield url


def _workers_with_outcomes(store: Store) -> set[int]:
    """The Procrastinate workers that ran a suite job to its end (a job keeps its worker's id while that one lives)."""
    with store.engine.connect() as conn:
        found = conn.execute(
            text(
                "SELECT DISTINCT worker_id FROM procrastinate_jobs"
                " WHERE status = 'succeeded' AND task_name = 'suite_item' AND worker_id IS NOT NULL"
            )
        ).scalars()
        return set(found)


def _sending(store: Store) -> int:
    runs, _ = store.list_runs(limit=200)
    return sum(r.status == "running" for r in runs)


def test_two_workers_share_a_suite_run_and_one_killed_midway_leaves_every_conversation_one_outcome(
    pg_url: str, stub: StubServer, stub_env: dict[str, str], tmp_path: Path
) -> None:
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    with running_workers(pg_url, stub_env, logs, "--stalled-after", "4") as workers, Store.open(pg_url) as store:
        suites = Suites(store)
        queue = ProcrastinateQueue(store, JobSettings(embedded_worker=False))
        run = suites.new_run("kill", provider="openai", model="stub-slow-0.5", concurrency=SLOTS)
        enqueue_open(queue, suites, run)
        # Both workers record outcomes before one dies; with 24 replays of 0.5 s on 4 slots, many remain.
        wait_for(lambda: len(_workers_with_outcomes(store)) == 2, 60, "an outcome from each worker")
        assert suites.progress(run.run_id).remaining > SLOTS
        # Every slot sending (two per worker), so the killed worker dies with replays in flight.
        wait_for(lambda: _sending(store) == SLOTS, 60, "every slot busy")
        workers[0].send_signal(signal.SIGKILL)
        workers[0].wait()
        wait_for(lambda: suites.run(run.run_id).status == "finished", 90, "the suite run")
        finished = suites.run(run.run_id)
        runs, _ = store.list_runs(limit=200)
        with store.engine.connect() as conn:
            jobs = conn.execute(text("SELECT status::text, attempts FROM procrastinate_jobs")).all()
        queue.stop()
    graceful = workers[1].returncode
    assert [item.outcome for item in finished.items] == ["matched"] * COUNT
    assert not [r for r in runs if r.status == "running"]
    ok = sorted(r.conversation_id for r in runs if r.status == "ok")
    assert ok == sorted(suite_data.conversation_id(i) for i in range(COUNT))  # one reply each: none ran twice
    assert {item.run_id for item in finished.items} == {r.run_id for r in runs if r.status == "ok"}
    cut = [r for r in runs if r.status != "ok"]
    assert cut and all("interrupted" in (r.error or "") for r in cut)  # the kill landed mid-replay
    assert sorted(status for status, _ in jobs) == ["succeeded"] * COUNT
    assert any(attempts >= 1 for _, attempts in jobs)  # the killed worker's jobs were taken back
    requests = httpx.get(f"{stub.base_url}/__stub/stats").json()["requests"]
    assert COUNT < requests <= COUNT + 2  # only the killed worker's two replays in flight were sent again
    assert graceful == 0
