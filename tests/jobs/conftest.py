"""Job queue fixtures: the stub provider's environment (tests/replay's) and a store seeded with a replayable
conversation."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from core.jobs import JobQueue
from core.jobs.replay_tasks import RUN_TASK
from core.replay.run import prepare, start
from core.store import Store
from tests.replay.conftest import stub_env
from tests.replay.replay_data import CONVERSATION

__all__ = ["queue_run", "running_workers", "stub_env", "wait_for"]


def queue_run(store: Store, queue: JobQueue, env: dict[str, str], model: str, provider: str = "openai") -> str:
    """Record a run of the seeded conversation as the dashboard does and queue its ``run`` job; its id."""
    prepared = prepare(store, CONVERSATION, provider, model, environ=env)
    run, created = start(store, prepared)
    assert created
    queue.enqueue(RUN_TASK, {"run_id": run.run_id, "timeout": 10}, provider=provider, lock=f"run:{run.run_id}")
    return run.run_id


def wait_for(done: Callable[[], bool], timeout: float = 30.0, what: str = "the jobs") -> None:
    """Poll ``done`` until it is true; fails naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"{what} did not finish within {timeout} s"
        time.sleep(0.05)


@contextmanager
def running_workers(
    url: str, env: dict[str, str], logs: list[Path], *options: str
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """One `traceloupe worker` (concurrency 2, then ``options``) per log file, each started and listening; on exit
    those still alive are stopped with SIGTERM and waited for, so a test reads their exit codes afterwards."""
    argv = [sys.executable, "-m", "web.cli", "worker", "--db", url, "--concurrency", "2", *options]
    workers: list[subprocess.Popen[bytes]] = []
    for log in logs:
        with log.open("wb") as out:
            workers.append(subprocess.Popen(argv, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT))
    try:
        wait_for(lambda: all("Starting worker" in log.read_text() for log in logs), 60, "the workers' start")
        yield workers
    finally:
        alive = [worker for worker in workers if worker.poll() is None]
        for worker in alive:
            worker.send_signal(signal.SIGTERM)
        for worker in alive:
            worker.wait(timeout=30)
