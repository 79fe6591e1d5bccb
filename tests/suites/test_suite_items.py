"""Suite storage and the per-conversation job, without the queue: suites from filters, outcomes in both modes,
the cost cap, a job delivered twice, an interrupted attempt taken over, and the report's regressions and fixes."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from core.errors import MisuseError, UnknownNameError
from core.jobs import JobSettings, queue_for
from core.store import ConversationQuery, Store
from core.store import suite_items as items
from core.store.audit import list_events
from core.store.suite_views import Progress, SuiteRunView
from core.suites import Suites, run_item
from core.suites.runner import watch
from tests.suites import suite_data
from web.devtools.stub_provider import StubServer

COUNT = 6


@pytest.fixture
def suites(store: Store, tmp_path: Path) -> Suites:
    suite_data.seed(store, tmp_path, COUNT)
    return Suites(store)


def _run_all(suites: Suites, run_id: str, env: dict[str, str]) -> None:
    with ThreadPoolExecutor(3) as pool:
        assert all(pool.map(lambda pk: run_item(suites.store, pk, environ=env), suites.open_items(run_id)))


def test_a_suite_keeps_the_conversations_its_filter_matched_when_it_was_made(suites: Suites, tmp_path: Path) -> None:
    suite = suites.create("weather", query=ConversationQuery(search="weather <<c00"))
    assert sorted(suite.conversations) == [suite_data.conversation_id(i) for i in range(COUNT)]
    assert suite.filter == {"search": "weather <<c00"}
    more = tmp_path / "more"
    more.mkdir()
    path = more / "late.jsonl"
    path.write_text("".join(__import__("json").dumps(m) + "\n" for m in suite_data.messages(7)))
    suites.store.import_path(path)
    assert len(suites.get("weather").conversations) == COUNT  # the members are the ones of the day it was made
    picked = suites.create("two", conversations=[suite_data.conversation_id(3), suite_data.conversation_id(1)])
    assert picked.conversations == (suite_data.conversation_id(3), suite_data.conversation_id(1))
    with pytest.raises(MisuseError, match="exists already"):
        suites.create("two", conversations=[suite_data.conversation_id(0)])
    with pytest.raises(UnknownNameError):
        suites.create("ghost", conversations=["no-such-conversation"])
    with pytest.raises(MisuseError, match="no conversation matches"):
        suites.create("empty", query=ConversationQuery(search="nothing like this anywhere"))
    assert [s.name for s in suites.summaries()] == ["two", "weather"]


@pytest.mark.parametrize("mode", ["steps", "final"])
def test_each_conversation_gets_its_outcome_and_a_second_run_reports_regressions_and_fixes(
    suites: Suites, stub: StubServer, stub_env: dict[str, str], mode: str
) -> None:
    suites.create("all", conversations=[suite_data.conversation_id(i) for i in range(COUNT)])
    suite_data.script(stub.base_url, COUNT, diverge=frozenset({1}), mode=mode)
    first = suites.new_run("all", provider="openai", model="gpt-4o", mode=mode)  # type: ignore[arg-type]
    _run_all(suites, first.run_id, stub_env)
    report = suites.report(first.run_id)
    assert report.run.status == "finished"
    outcomes = {i.conversation_id: i.outcome for i in report.run.items}
    assert outcomes == {suite_data.conversation_id(i): "diverged" if i == 1 else "matched" for i in range(COUNT)}
    diverged = next(i for i in report.run.items if i.outcome == "diverged")
    expected = ("different_arguments", f"{diverged.conversation_id}-step") if mode == "steps" else (
        "called_instead_of_answering", f"{diverged.conversation_id}-a")  # fmt: skip
    assert (diverged.diverged_step, diverged.reason, diverged.diverged_at) == (1, *expected)
    assert all(i.run_id and i.cost_usd and i.input_tokens for i in report.run.items)
    assert report.exit_code() == 0

    suite_data.script(stub.base_url, COUNT, diverge=frozenset({2, 4}), mode=mode)
    second = suites.new_run("all", provider="openai", model="gpt-4o", mode=mode, baseline="last")  # type: ignore[arg-type]
    assert second.baseline_run_id == first.run_id
    _run_all(suites, second.run_id, stub_env)
    report = suites.report(second.run_id)
    assert [c.conversation_id for c in report.regressions] == [suite_data.conversation_id(i) for i in (2, 4)]
    assert [c.conversation_id for c in report.fixes] == [suite_data.conversation_id(1)]
    assert report.exit_code() == 6
    data = report.to_json()
    assert data["totals"]["matched"] == COUNT - 2 and data["totals"]["diverged"] == 2
    assert data["baseline"] == first.run_id and len(data["regressions"]) == 2


def test_a_provider_failure_is_failed_with_its_error_and_a_damaged_history_is_refused(
    suites: Suites, stub: StubServer, stub_env: dict[str, str], tmp_path: Path
) -> None:
    suites.create("all", conversations=[suite_data.conversation_id(i) for i in range(2)])
    run = suites.new_run("all", provider="openai", model="stub-error-500", mode="final")
    _run_all(suites, run.run_id, stub_env)
    report = suites.report(run.run_id)
    assert {i.outcome for i in report.run.items} == {"failed"}
    assert all(i.reason == "http_error" and "500" in (i.error or "") for i in report.run.items)
    assert report.exit_code() == 0  # no baseline, so no regression; something ran
    suite_data.seed(suites.store, tmp_path, COUNT + 1, damaged=frozenset({COUNT}))
    suites.create("damaged", conversations=[suite_data.conversation_id(COUNT)])
    for mode in ("final", "steps"):
        run = suites.new_run("damaged", provider="openai", model="gpt-4o", mode=mode)  # type: ignore[arg-type]
        _run_all(suites, run.run_id, stub_env)
        report = suites.report(run.run_id)
        assert [i.outcome for i in report.run.items] == ["refused"]
        assert "damaged" in (report.run.items[0].error or "") and report.exit_code() == 1
    assert len(stub.state.requests) == 2  # the two 500s; nothing sent for the damaged conversation


def test_once_the_spend_reaches_max_cost_the_conversations_not_started_are_cancelled(
    suites: Suites, stub: StubServer, stub_env: dict[str, str]
) -> None:
    suites.create("all", conversations=[suite_data.conversation_id(i) for i in range(COUNT)])
    cap = 0.0015  # a reply is estimated at about 0.0011 USD and costs 0.00011 (the stub's usage)
    run = suites.new_run("all", provider="openai", model="gpt-4o", mode="final", max_cost=cap)
    for pk in suites.open_items(run.run_id):  # one at a time: each start sees what the earlier ones spent
        run_item(suites.store, pk, environ=stub_env)
    report = suites.report(run.run_id)
    started = [i for i in report.run.items if i.outcome == "matched"]
    assert started and all(i.cost_usd is not None and i.cost_usd > 0 for i in started)
    assert report.cost_usd <= cap  # no reply was sent whose estimate could pass the cap
    cancelled = [i for i in report.run.items if i.outcome == "cancelled"]
    assert len(cancelled) == COUNT - len(started) > 0
    assert all(i.reason == "max_cost" and i.run_id is None for i in cancelled)
    assert "would pass --max-cost 0.0015" in (cancelled[0].error or "")
    assert report.cancelled_by_cost == len(cancelled) and report.run.status == "finished"
    assert len(stub.state.requests) == len(started)


def test_a_job_delivered_twice_replays_once_and_an_interrupted_attempt_is_taken_over(
    suites: Suites, stub: StubServer, stub_env: dict[str, str]
) -> None:
    suites.create("one", conversations=[suite_data.conversation_id(0), suite_data.conversation_id(1)])
    run = suites.new_run("one", provider="openai", model="gpt-4o", mode="final")
    first, second = suites.open_items(run.run_id)
    assert run_item(suites.store, first, environ=stub_env)
    assert not run_item(suites.store, first, environ=stub_env)  # it has its outcome: nothing sent again
    assert len(stub.state.requests) == 1
    # An attempt claimed the second item and started its replay, then its process died.
    claim = items.claim_item(suites.store.engine, second)
    assert claim is not None
    from core.replay.run import prepare, start

    prepared = prepare(suites.store, claim.conversation_id, "openai", "gpt-4o", environ=stub_env)
    orphan, _ = start(suites.store, prepared, idempotency_key=claim.replay_key)
    assert run_item(suites.store, second, environ=stub_env)
    assert suites.store.get_run(orphan.run_id).status == "error"  # closed as interrupted, not left running
    # The dead attempt's late result is not recorded.
    assert not items.finish_item(suites.store.engine, claim, items.ItemResult("failed", error="late"))
    report = suites.report(run.run_id)
    assert [i.outcome for i in report.run.items] == ["matched", "matched"]
    assert report.run.items[1].attempt == 2 and report.run.status == "finished"


class _Killed(BaseException):
    """The worker's process dying: nothing after it runs, no handler sees it."""


@pytest.mark.parametrize("mode", ["steps", "final"])
def test_an_attempt_killed_after_its_replay_ended_is_recorded_by_the_next_attempt_without_sending_again(
    suites: Suites, stub: StubServer, stub_env: dict[str, str], mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    suites.create("one", conversations=[suite_data.conversation_id(0)])
    suite_data.script(stub.base_url, 1, diverge=frozenset({0}), mode=mode)
    run = suites.new_run("one", provider="openai", model="gpt-4o", mode=mode)  # type: ignore[arg-type]
    (item,) = suites.open_items(run.run_id)
    recorded = items.finish_item

    def killed(*args: object, **kwargs: object) -> bool:
        raise _Killed

    monkeypatch.setattr(items, "finish_item", killed)  # the replay is recorded, the item's outcome is not
    with pytest.raises(_Killed):
        run_item(suites.store, item, environ=stub_env)
    monkeypatch.setattr(items, "finish_item", recorded)
    assert run_item(suites.store, item, environ=stub_env)  # the job taken back by another worker
    assert len(stub.state.requests) == 1  # the replay did not run twice to completion
    replays = suites.store.list_step_runs(limit=10) if mode == "steps" else suites.store.list_runs(limit=10)[0]
    (replay,) = replays
    (ended,) = suites.run(run.run_id).items
    assert (ended.outcome, ended.diverged_step, ended.attempt, ended.run_id) == ("diverged", 1, 2, replay.run_id)
    assert suites.run(run.run_id).status == "finished"


def _one_outcome_recorded(suites: Suites) -> tuple[SuiteRunView, int]:
    """A run of one conversation whose item has its outcome (failed) recorded, the run not yet marked finished;
    the run and the item's key."""
    suites.create("one", conversations=[suite_data.conversation_id(0)])
    run = suites.new_run("one", provider="openai", model="gpt-4o", mode="final")
    (pk,) = suites.open_items(run.run_id)
    claim = items.claim_item(suites.store.engine, pk)
    assert claim is not None
    assert items.finish_item(suites.store.engine, claim, items.ItemResult("failed", error="the provider said no"))
    return run, pk


def test_a_run_whose_last_outcome_was_recorded_just_before_its_worker_died_finishes_when_the_job_runs_again(
    suites: Suites, stub_env: dict[str, str]
) -> None:
    run, pk = _one_outcome_recorded(suites)  # the outcome committed, then the process was killed
    assert suites.run(run.run_id).status == "running"
    assert not run_item(suites.store, pk, environ=stub_env)  # the queue delivers the job again
    finished = suites.run(run.run_id)
    assert finished.status == "finished" and [i.outcome for i in finished.items] == ["failed"]


def test_watching_a_run_returns_once_it_is_marked_finished_just_after_its_last_outcome(suites: Suites) -> None:
    run, _ = _one_outcome_recorded(suites)
    polls: list[Progress] = []

    def finish_after_the_first_poll(progress: Progress) -> None:
        polls.append(progress)
        assert len(polls) < 20, "the watcher never saw the run finished"
        suites.finish_if_done(run.run_id)  # what the job does once the outcome has committed

    done = watch(
        suites, queue_for(suites.store, JobSettings()), run.run_id, on_progress=finish_after_the_first_poll, poll=0
    )
    assert done.status == "finished" and done.items[0].outcome == "failed"


def test_a_suite_run_records_who_started_it_and_its_end_is_audited_with_its_cost(
    suites: Suites, stub: StubServer, stub_env: dict[str, str]
) -> None:
    suites.create("all", conversations=[suite_data.conversation_id(i) for i in range(COUNT)])
    suite_data.script(stub.base_url, COUNT, diverge=frozenset(), mode="final")
    run, _ = suites.claim_run("all", provider="openai", model="gpt-4o", idempotency_key=None, started_by="reviewer")
    assert run.started_by == "reviewer" and not list_events(suites.store.engine, actor="reviewer")
    _run_all(suites, run.run_id, stub_env)
    report = suites.report(run.run_id)
    assert report.run.started_by == "reviewer" and report.to_json()["started_by"] == "reviewer"
    (event,) = list_events(suites.store.engine, actor="reviewer")
    assert (event.action, event.target) == ("suite.run.finished", run.run_id)
    assert event.detail is not None and event.detail["cost_usd"] == pytest.approx(report.cost_usd) and report.cost_usd
