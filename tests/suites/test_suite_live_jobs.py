"""A `traceloupe worker` with a short `--stalled-after` beside a running `suite run` (PostgreSQL): it shares the
jobs but never takes back one that the suite run's own worker is running, so each conversation reaches the
provider exactly once; a job is taken back only when its worker's process is gone (``tests/jobs/test_pg.py``'s
``kill -9``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from core.store import Store
from core.suites import Suites
from tests.jobs.conftest import running_workers
from tests.store.store_pg import pg_database
from tests.suites import suite_data
from web.cli import main
from web.devtools.stub_provider import StubServer

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

COUNT = 10


@pytest.fixture
def pg_url(tmp_path: Path) -> Iterator[str]:
    """A fresh migrated database holding suite ``live`` of COUNT conversations."""
    with pg_database() as url:
        with Store.open(url) as store:
            ids = suite_data.seed(store, tmp_path, COUNT)
            Suites(store).create("live", conversations=ids)
        yield url


def test_a_worker_with_a_short_stalled_after_never_takes_back_the_jobs_of_a_live_suite_run(
    pg_url: str, stub: StubServer, stub_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The suite run's worker renews its heartbeat every 10 s; the other worker's own setting is 0.5 s.
    with running_workers(pg_url, stub_env, [tmp_path / "w.log"], "--stalled-after", "0.5") as workers:
        code = main(["suite", "run", "live", "--provider", "openai", "--model", "stub-slow-1.5", "--mode", "final",
                     "--concurrency", "4", "--json", "--db", pg_url])  # fmt: skip
        report = json.loads(capsys.readouterr().out)
    assert code == 0 and workers[0].returncode == 0
    assert len(stub.state.requests) == COUNT  # one provider call per conversation
    assert [item["attempts"] for item in report["items"]] == [1] * COUNT
    assert all(item["outcome"] in ("matched", "diverged") for item in report["items"])
    assert "taken back" not in (tmp_path / "w.log").read_text()
    with Store.open(pg_url) as store, store.engine.connect() as conn:
        jobs = conn.execute(text("SELECT status::text, attempts FROM procrastinate_jobs")).all()
        runs, _ = store.list_runs(limit=100)
    assert sorted(jobs) == [("succeeded", 1)] * COUNT  # each ran once (finishing counts the attempt)
    assert not [r for r in runs if r.status != "ok"]  # no replay cut short as interrupted
