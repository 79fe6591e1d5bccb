"""A suite run whose process is killed midway (SQLite): ``suite run NAME --resume``, or a ``serve`` started on the
database, finishes it; every conversation ends with one outcome, nothing is left ``running`` and no conversation's
reply was recorded twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from core.jobs.local import LocalQueue
from core.store import Store
from core.suites import Progress, Suites
from core.suites.runner import enqueue_open
from tests.jobs.conftest import wait_for
from tests.replay.web_server import free_port
from tests.suites import suite_data
from web.cli import main
from web.devtools.stub_provider import StubServer

COUNT = 16


@pytest.mark.slow
@pytest.mark.parametrize("finisher", ["resume", "serve"])
def test_a_killed_suite_run_is_finished_by_resume_or_by_serve(
    tmp_path: Path, stub: StubServer, stub_env: dict[str, str], capsys: pytest.CaptureFixture[str], finisher: str
) -> None:
    db = str(tmp_path / "resume.db")
    with Store.open(db) as store:
        suite_data.seed(store, tmp_path, COUNT)
    assert main(["suite", "create", "slow", "--search", "weather", "--db", db]) == 0
    capsys.readouterr()
    # Each reply takes 0.4 s, two at a time: about 3 s in all, so the kill lands midway.
    command = [sys.executable, "-m", "web.cli", "suite", "run", "slow", "--provider", "openai", "--model",
               "stub-slow-0.4", "--concurrency", "2", "--db", db]  # fmt: skip
    env = {**os.environ, **stub_env}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        with Store.open(db) as store:
            suites = Suites(store)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                runs = suites.runs("slow")
                if runs and _midway(suites.progress(runs[0].run_id)):
                    break
                time.sleep(0.05)
            else:
                pytest.fail(f"the suite run made no progress: {process.stderr.read() if process.stderr else ''}")
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()
    with Store.open(db) as store:
        run_id = Suites(store).runs("slow")[0].run_id
        progress = Suites(store).progress(run_id)
        assert 4 <= progress.done < COUNT and progress.counts.get("running", 0) >= 1
        with store.engine.begin() as conn:  # the killed worker's leases run out (instead of waiting for them)
            conn.execute(text("UPDATE jobs SET lease_until = 0 WHERE status = 'running'"))

    if finisher == "resume":
        assert main(["suite", "run", "slow", "--resume", "--json", "--db", db]) == 0
        report = json.loads(capsys.readouterr().out)
    else:
        report = _finished_by_serve(db, run_id, {**os.environ, **stub_env})
    assert report["run_id"] == run_id and report["status"] == "finished"
    assert report["totals"]["matched"] == COUNT
    with Store.open(db) as store:
        runs, _ = store.list_runs(limit=100)
    assert not [r for r in runs if r.status == "running"]
    ok = [r.conversation_id for r in runs if r.status == "ok"]
    assert sorted(ok) == sorted(suite_data.conversation_id(i) for i in range(COUNT))  # one reply each, no more
    interrupted = [r for r in runs if r.status == "error"]
    assert all("interrupted" in (r.error or "") for r in interrupted)
    assert {i["run_id"] for i in report["items"]} == {r.run_id for r in runs if r.status == "ok"}


@pytest.mark.slow
def test_a_serve_killed_mid_suite_finishes_the_suite_when_started_again(
    tmp_path: Path, stub: StubServer, stub_env: dict[str, str]
) -> None:
    """Nothing expires the killed server's leases by hand: the restarted one takes its jobs back itself."""
    db = str(tmp_path / "serve.db")
    with Store.open(db) as store:
        suites = Suites(store)
        suites.create("slow", conversations=suite_data.seed(store, tmp_path, COUNT))
        run = suites.new_run("slow", provider="openai", model="stub-slow-0.4", concurrency=2)
        enqueue_open(LocalQueue(store), suites, run)  # queued as the dashboard does; the server runs the jobs
    env = {**os.environ, **stub_env}
    server = _serve(db, env)
    try:
        with Store.open(db) as store:
            wait_for(lambda: _midway(Suites(store).progress(run.run_id)), 60, "the server's first replays")
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
    with Store.open(db) as store:
        progress = Suites(store).progress(run.run_id)
    assert progress.done < COUNT and progress.counts.get("running", 0) >= 1
    server = _serve(db, env)
    try:
        with Store.open(db) as store:
            suites = Suites(store)
            wait_for(lambda: suites.run(run.run_id).status == "finished", 90, "the restarted server's replays")
            finished = suites.run(run.run_id)
            runs, _ = store.list_runs(limit=100)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert [item.outcome for item in finished.items] == ["matched"] * COUNT
    assert not [r for r in runs if r.status == "running"]
    ok = sorted(r.conversation_id for r in runs if r.status == "ok")
    assert ok == sorted(suite_data.conversation_id(i) for i in range(COUNT))  # one reply each, no more
    assert all("interrupted" in (r.error or "") for r in runs if r.status != "ok")


def _midway(progress: Progress) -> bool:
    """Four conversations done and one replaying: a kill now cuts a replay (not the gap between two jobs)."""
    return progress.done >= 4 and progress.counts.get("running", 0) >= 1


def _serve(db: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "web.cli", "serve", "--db", db, "--port", str(free_port())]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _finished_by_serve(db: str, run_id: str, env: dict[str, str]) -> dict[str, object]:
    """Start ``traceloupe serve`` on the database, wait for the suite run to finish, stop it; the run's report."""
    server = _serve(db, env)
    try:
        with Store.open(db) as store:
            suites = Suites(store)
            deadline = time.monotonic() + 60
            while suites.run(run_id).status != "finished":
                assert time.monotonic() < deadline, "serve did not finish the suite run"
                assert server.poll() is None, "serve stopped"
                time.sleep(0.1)
            return suites.report(run_id).to_json()
    finally:
        server.terminate()
        server.wait(timeout=30)
