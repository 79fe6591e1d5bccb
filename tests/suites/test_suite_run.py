"""``traceloupe suite run`` end to end on the job queue, on SQLite and PostgreSQL, against the stub provider:
50 conversations at concurrency 8, then a run diverging on 3 of them (exit 6, JUnit with 3 failures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml

from core.store import Store
from tests.suites import suite_data
from web.cli import main
from web.devtools.stub_provider import StubServer

FIFTY = 50
DIVERGE = frozenset({3, 17, 41})


def _suite_run(db_url: str, *extra: str) -> list[str]:
    return ["suite", "run", "fifty", "--provider", "openai", "--model", "gpt-4o", "--mode", "steps", "--db", db_url,
            *extra]  # fmt: skip


@pytest.mark.slow
def test_fifty_conversations_run_to_the_end_and_three_divergences_are_the_regressions(
    db_url: str, tmp_path: Path, stub: StubServer, stub_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(db_url) as store:
        ids = suite_data.seed(store, tmp_path, FIFTY)
    assert main(["suite", "create", "fifty", "--search", "What is the weather", "--db", db_url]) == 0
    assert "fifty: 50 conversation(s)" in capsys.readouterr().out

    suite_data.script(stub.base_url, FIFTY)
    assert main(_suite_run(db_url, "--concurrency", "8", "--json")) == 0
    captured = capsys.readouterr()
    first = json.loads(captured.out)
    assert captured.err.count("] suite-conv-") == FIFTY  # not a terminal: one progress line per conversation
    assert first["status"] == "finished" and first["totals"]["matched"] == FIFTY
    assert first["totals"]["conversations"] == FIFTY and first["regressions"] == [] and first["exit_code"] == 0
    with Store.open(db_url) as store:
        recorded = {r.run_id: r for r in store.list_step_runs(limit=200)}
    # The report's counts are the runs recorded: one matched step run per conversation, each the item's own.
    assert len(recorded) == FIFTY
    assert {recorded[i["run_id"]].conversation_id for i in first["items"]} == set(ids)
    assert all(recorded[i["run_id"]].status == i["outcome"] == "matched" for i in first["items"])
    assert first["totals"]["tokens"]["input"] == sum(r.input_tokens or 0 for r in recorded.values())
    assert first["totals"]["cost_usd"] == pytest.approx(sum(r.cost_usd or 0 for r in recorded.values()))

    suite_data.script(stub.base_url, FIFTY, diverge=DIVERGE)
    junit = tmp_path / "suite.xml"
    code = main(_suite_run(db_url, "--concurrency", "8", "--baseline", "last", "--junit", str(junit)))
    out = capsys.readouterr().out
    assert code == 6
    regressed = sorted(suite_data.conversation_id(i) for i in DIVERGE)
    assert "3 regression(s), 0 fix(es)" in out
    assert sorted(line.split()[1] for line in out.splitlines() if line.startswith("  regression ")) == regressed
    xml = JUnitXml.fromfile(str(junit))
    suite = next(iter(xml))
    assert (suite.tests, suite.failures) == (FIFTY, 3)
    failed = sorted(case.name for case in suite if any(isinstance(r, Failure) for r in case.result))
    assert failed == regressed

    assert main(["suite", "show", "fifty", "--json", "--db", db_url]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert len(shown["runs"]) == 2 and shown["report"]["baseline"] == first["run_id"]
    assert sorted(r["conversation_id"] for r in shown["report"]["regressions"]) == regressed


def test_max_cost_cancels_what_has_not_started_and_the_report_says_so(
    tmp_path: Path, stub: StubServer, stub_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "cap.db")
    with Store.open(db) as store:
        suite_data.seed(store, tmp_path, 6)
    assert main(["suite", "create", "six", "--search", "weather", "--db", db]) == 0
    # A reply costs 0.00011 USD (gpt-4o) and is estimated at about 0.0011 before it is sent.
    args = ["suite", "run", "six", "--provider", "openai", "--model", "gpt-4o", "--concurrency", "1", "--db", db]
    assert main([*args, "--max-cost", "0.0015"]) == 0
    out = capsys.readouterr().out
    sent = len(stub.state.requests)
    assert 0 < sent < 6
    assert f"{sent} matched, 0 diverged, 0 failed, 0 refused, {6 - sent} cancelled" in out
    assert f"the spend reached the cap, {6 - sent} conversation(s) were cancelled before they started" in out
    assert f"spent ${sent * 0.00011:.6f} of --max-cost $0.0015" in out
    assert main([*args, "--max-cost", "0"]) == 1  # nothing could run
    assert "0 matched, 0 diverged, 0 failed, 0 refused, 6 cancelled" in capsys.readouterr().out


def test_a_refused_conversation_names_each_damaged_record_once(
    tmp_path: Path, stub: StubServer, stub_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "damaged.db")
    with Store.open(db) as store:
        suite_data.seed(store, tmp_path, 1, damaged=frozenset({0}))
    damaged = f"{suite_data.conversation_id(0)}-step"  # the trace's assistant step, also expanded into the history
    assert main(["suite", "create", "one", "--search", "weather", "--db", db]) == 0
    junit = tmp_path / "one.xml"
    args = ["suite", "run", "one", "--provider", "openai", "--model", "gpt-4o", "--mode", "steps", "--db", db]
    assert main([*args, "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    said = [line for line in out.splitlines() if " refused: " in line]
    assert len(said) == 2 and all("1 damaged record " in line and line.count(damaged) == 1 for line in said), out
    (case,) = next(iter(JUnitXml.fromfile(str(junit))))
    (skipped,) = case.result
    assert skipped.message.count(damaged) == 1, skipped.message
    assert main(["suite", "show", "one", "--json", "--db", db]) == 0
    (item,) = json.loads(capsys.readouterr().out)["report"]["items"]
    assert item["outcome"] == "refused" and item["error"].count(damaged) == 1, item["error"]
