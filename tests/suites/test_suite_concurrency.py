"""A suite run's concurrency bounds its replays in flight across every worker of the database, on both backends."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from core.jobs import JobSettings, queue_for
from core.store import Store
from core.suites import Suites
from core.suites.runner import enqueue_open, watch
from tests.suites import suite_data
from web.devtools.stub_provider import StubServer

COUNT = 8


@pytest.mark.slow
def test_two_workers_of_four_slots_run_a_suite_of_concurrency_two_two_at_a_time(
    store: Store, tmp_path: Path, stub: StubServer, stub_env: dict[str, str]
) -> None:
    """Two queues on one database stand for two processes (``serve`` and a worker): eight slots, two replays."""
    suites = Suites(store)
    suites.create("bounded", conversations=suite_data.seed(store, tmp_path, COUNT))
    settings = JobSettings(concurrency=4, environ=lambda: stub_env, poll_seconds=0.1)
    queues = [queue_for(store, settings), queue_for(store, settings)]
    run = suites.new_run("bounded", provider="openai", model="stub-slow-0.5", concurrency=2)
    enqueue_open(queues[0], suites, run)
    for queue in queues:
        queue.start()
    try:
        finished = watch(suites, queues[0], run.run_id, poll=0.05)
    finally:
        for queue in queues:
            queue.stop()
    assert [item.outcome for item in finished.items] == ["matched"] * COUNT
    stats = httpx.get(f"{stub.base_url}/__stub/stats").json()
    assert stats["requests"] == COUNT
    assert stats["peak_in_flight"] == 2  # two lanes at once, never more
