"""A suite run's ``--max-cost`` holds across the whole run, on SQLite and PostgreSQL, against the stub provider:
a step replay already running stops before a step that could pass the cap, and items running at once never pass
it together (every call holds its estimate in the run's budget before it is sent)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from core.store import Store
from tests.suites import suite_data
from web.cli import main
from web.devtools.stub_provider import StubServer


def _script(base_url: str, count: int, *, step_text: str, delay: float = 0.0) -> None:
    """Each conversation replayed as recorded, its tool step answering with ``step_text`` beside the call."""
    for i in range(count):
        steps = [
            {"text": step_text, "tool_calls": [suite_data.call(i)], "delay": delay},
            {"text": suite_data.FINAL_TEXT, "delay": delay},
        ]
        answer = httpx.post(f"{base_url}/__stub/script", json={"match": suite_data.marker(i), "steps": steps})
        assert answer.status_code == 200


def _suite(db_url: str, tmp_path: Path, count: int) -> None:
    with Store.open(db_url) as store:
        suite_data.seed(store, tmp_path, count)
    assert main(["suite", "create", "capped", "--search", "weather", "--db", db_url]) == 0


def _run(db_url: str, cap: str, concurrency: int, *extra: str) -> list[str]:
    return ["suite", "run", "capped", "--provider", "openai", "--model", "gpt-4o", "--mode", "steps",
            "--concurrency", str(concurrency), "--max-cost", cap, "--db", db_url, *extra]  # fmt: skip


def test_the_suite_cap_stops_a_step_replay_already_running_before_its_next_step(
    db_url: str, tmp_path: Path, stub: StubServer, stub_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _suite(db_url, tmp_path, 2)
    capsys.readouterr()
    # Step 1 answers with 2,000 output tokens (0.02 USD at gpt-4o's rate): past the cap on its own.
    _script(stub.base_url, 2, step_text="x" * 8000)
    assert main(_run(db_url, "0.005", 1, "--json")) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(stub.state.requests) == 1  # step 2 of the first conversation was not sent
    first, second = report["items"]
    assert (first["outcome"], first["reason"]) == ("cancelled", "max_cost") and first["run_id"] is not None
    assert "step 2 not sent" in first["error"] and "would pass --max-cost 0.005" in first["error"]
    assert (second["outcome"], second["reason"], second["run_id"]) == ("cancelled", "max_cost", None)
    totals = report["totals"]
    assert (totals["stopped_by_max_cost"], totals["cancelled_by_max_cost"]) == (1, 1)
    assert totals["cost_usd"] == pytest.approx(first["cost_usd"]) and totals["cost_usd"] > 0.005
    assert totals["max_cost_left_usd"] == pytest.approx(0.005 - totals["cost_usd"])
    with Store.open(db_url) as store:
        step_run = store.get_step_run(first["run_id"])
    assert (step_run.status, step_run.reason, len(step_run.steps)) == ("capped", "max_cost", 1)
    assert step_run.max_cost == 0.005

    assert main(["suite", "show", "capped", "--db", db_url]) == 0
    out = capsys.readouterr().out
    assert f"spent ${totals['cost_usd']:.6f} of --max-cost $0.005" in out
    assert "1 step replay(s) stopped before a step that could pass the cap" in out


@pytest.mark.slow
def test_items_running_at_once_never_pass_the_suite_cap_together(
    db_url: str, tmp_path: Path, stub: StubServer, stub_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The stub's answers cost less than their estimates (its input is 12 tokens, its output shorter than the
    recorded replies), so a cap kept call by call is never passed at all."""
    count = 16
    _suite(db_url, tmp_path, count)
    capsys.readouterr()
    _script(stub.base_url, count, step_text="y" * 150, delay=0.2)
    cap = 0.003
    assert main(_run(db_url, str(cap), 8, "--json")) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["totals"]["cost_usd"] <= cap
    assert stub.state.requests and report["totals"]["cancelled"] >= 1
    with Store.open(db_url) as store:
        step_runs = store.list_step_runs(limit=100)
    # Every provider call is a recorded step, and the item's cost is its steps' cost.
    assert len(stub.state.requests) == sum(len(store_run.steps) for store_run in step_runs)
    assert report["totals"]["cost_usd"] == pytest.approx(sum(r.cost_usd or 0 for r in step_runs))
    # A step replay the cap stopped midway keeps its run; one stopped before step 1 reads as not started.
    steps_of = {r.run_id: len(r.steps) for r in step_runs}
    cancelled = [i for i in report["items"] if i["outcome"] == "cancelled"]
    assert all(steps_of[i["run_id"]] > 0 for i in cancelled if i["run_id"] is not None)
    assert report["totals"]["stopped_by_max_cost"] + report["totals"]["cancelled_by_max_cost"] == len(cancelled)
