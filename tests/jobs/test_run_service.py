"""The dashboard's RunService on the queue: runs pending in any process bound new ones; other jobs do not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store import Store
from tests.jobs.conftest import wait_for
from tests.replay.replay_data import CONVERSATION, seed_store
from tests.store.store_pg import pg_database
from web.devtools.stub_provider import StubServer
from web.replays.service import ReplayAsk, ReplayBusy, RunService


def _ask(key_char: str) -> ReplayAsk:
    return ReplayAsk(CONVERSATION, "openai", "m", key_char * 16, model_as_typed=True)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(str(tmp_path / "service.db")) as opened:
        seed_store(opened, tmp_path)
        yield opened


def test_pending_runs_bound_new_ones_and_other_jobs_do_not(store: Store, stub_env: dict[str, str]) -> None:
    service = RunService(store, workers=1, max_pending=1, environ=lambda: stub_env)  # never started: runs wait
    service.queue.enqueue("suite_item", {"suite_run": "elsewhere"}, provider="openai")  # a suite's job
    service.submit(_ask("k"), upto=None)
    assert service.pending == 1
    with pytest.raises(ReplayBusy):
        service.submit(_ask("j"), upto=None)
    other = RunService(store, workers=1, max_pending=1, environ=lambda: stub_env)  # another server process
    with pytest.raises(ReplayBusy):
        other.submit(_ask("j"), upto=None)


@pytest.mark.postgres
def test_serve_on_postgresql_runs_the_jobs_in_its_embedded_worker(
    tmp_path: Path, stub: StubServer, stub_env: dict[str, str]
) -> None:
    with pg_database() as url, Store.open(url) as store:
        seed_store(store, tmp_path)
        service = RunService(store, environ=lambda: stub_env)
        service.start()
        try:
            run = service.submit(_ask("p"), upto=None)
            wait_for(lambda: store.get_run(run.run_id).status != "running")
        finally:
            service.shutdown()
        assert store.get_run(run.run_id).status == "ok" and service.pending == 0


def test_a_pending_step_replay_counts_toward_the_bound(store: Store, stub_env: dict[str, str]) -> None:
    service = RunService(store, workers=1, max_pending=1, environ=lambda: stub_env)  # never started: jobs wait
    service.queue.enqueue("step_run", {"run_id": "elsewhere"}, provider="openai")  # a dashboard step replay
    assert service.pending == 1
    with pytest.raises(ReplayBusy):
        service.submit(_ask("s"), upto=None)
