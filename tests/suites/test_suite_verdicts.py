"""A suite's final answers are judged by the comparison it chose: the 13 demo conversations against the stub.

``similar`` matches no answer that means something else ("You're welcome!" against a refund), a judge
scripted on the stub decides where it is asked and its cost counts in the run, a baseline is a run of
the same mode and comparison, and the JUnit file names the comparison, the score and the diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from junitparser import Failure, JUnitXml

from core.providers import provider_named
from core.replay.cost import StepUsage, cost_of
from web.cli import main
from web.devtools import demo_data
from web.devtools.stub_provider import StubServer

REFUND = demo_data.AGENT_ANSWER
SAME_MEANING = {
    # conversation: (a text only its replay request holds, what the stub answers)
    "demo-sql": ("run_sql done for", "You're welcome."),
    "demo-code": ("read_file done for", "You're welcome!"),
}
OTHER_MEANING = {
    "demo-support": ("lookup_invoice done for", "Done: lookup_invoice on INV-2231. Anything else?"),
    "demo-research": ("search done for", "I can't browse the web, so I can't find recent papers."),
    demo_data.AGENT_STEPS: ("Refund it and tell Ana", "You're welcome!"),
}


def _script(stub: StubServer, replies: dict[str, tuple[str, str]]) -> None:
    for match, text in replies.values():
        script = {"match": match, "steps": [{"text": text}]}
        httpx.post(f"{stub.base_url}/__stub/script", json=script).raise_for_status()


def _demo_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    db = str(tmp_path / "demo.db")
    demo_data.build(tmp_path / "demo", db=Path(db), long_records=40)
    ids = [c for c in dict.fromkeys(m["conversation_id"] for m in demo_data.conversations(40))]
    assert len(ids) == 13
    assert main(["suite", "create", "demo", *[a for c in ids for a in ("--conversation", c)], "--db", db]) == 0
    capsys.readouterr()
    return db


def _run(db: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, Any]]:
    args = ["suite", "run", "demo", "--provider", "openai", "--model", "gpt-4o", "--db", db, "--json", *extra]
    code = main(args)
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_similar_matches_no_demo_answer_that_means_something_else(
    tmp_path: Path, stub: StubServer, stub_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db = _demo_suite(tmp_path, capsys)
    _script(stub, {**SAME_MEANING, **OTHER_MEANING})
    junit = tmp_path / "demo.xml"
    code, report = _run(db, capsys, "--compare", "similar", "--junit", str(junit))
    assert report["comparison"] == "similar:0.6"
    items = {i["conversation_id"]: i for i in report["items"]}
    matched = {c for c, i in items.items() if i["outcome"] == "matched"}
    # Only the replies scripted to mean the same match; the stub's own reply and every other answer do not.
    assert matched == set(SAME_MEANING)
    for cid in OTHER_MEANING:
        item = items[cid]
        assert (item["outcome"], item["reason"], item["diverged_step"]) == ("diverged", "different_answer", 1)
        assert item["comparison"]["comparison"] == "similar:0.6" and item["comparison"]["score"] < 0.6
        assert any(op["op"] != "equal" for op in item["comparison"]["word_diff"])
    refund = items[demo_data.AGENT_STEPS]["comparison"]
    assert {"op": "replace", "recorded": REFUND, "replayed": "You're welcome!"} in refund["word_diff"]
    # No baseline: diverged conversations fail the JUnit file, the exit code stays 0, and the file says why.
    assert code == 0
    suite = next(iter(JUnitXml.fromfile(str(junit))))
    props = {p.name: p.value for p in suite.properties()}
    assert props["comparison"] == "similar:0.6" and props["baseline"].startswith("none")
    assert len(suite.timestamp) == 19 and suite.timestamp[10] == "T"  # ISO 8601, e.g. 2026-12-04T21:30:00
    case = next(c for c in suite if c.name == demo_data.AGENT_STEPS)
    failure = next(r for r in case.result if isinstance(r, Failure))
    assert "different_answer" in failure.message and "compared by similar:0.6: score 0.00" in failure.message
    assert "+[You're welcome!]" in failure.message


@pytest.mark.slow
def test_a_judge_on_the_stub_decides_and_its_cost_counts_in_the_run(
    tmp_path: Path, stub: StubServer, stub_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db = _demo_suite(tmp_path, capsys)
    changed = REFUND.replace("84.50", "42.25")
    _script(stub, {
        "demo-sql": ("run_sql done for", "You are welcome!"),  # similar scores it 0.4; the judge says same
        demo_data.AGENT_STEPS: ("Refund it and tell Ana", changed),  # similar scores it 0.92; the judge says different
    })  # fmt: skip
    verdicts = [
        ("You are welcome!", "same", "Both thank the user; nothing else is said."),
        ("42.25 EUR", "different", "The refunded amount differs: 84.50 EUR recorded, 42.25 EUR replayed."),
        ("stub provider's reply", "different", "The replayed answer says nothing the recorded one says."),
    ]
    for match, verdict, reasoning in verdicts:
        steps = [{"verdict": verdict, "reasoning": reasoning}] * 13
        httpx.post(f"{stub.base_url}/__stub/script", json={"match": match, "steps": steps}).raise_for_status()
    code, report = _run(db, capsys, "--compare", "judge:openai/gpt-4o-mini")
    assert code == 0 and report["comparison"] == "judge:openai/gpt-4o-mini"
    items = {i["conversation_id"]: i for i in report["items"]}
    assert items["demo-sql"]["outcome"] == "matched"
    assert items["demo-sql"]["comparison"]["judge"]["verdict"] == "same"
    refund = items[demo_data.AGENT_STEPS]
    assert (refund["outcome"], refund["reason"]) == ("diverged", "different_answer")
    assert refund["comparison"]["judge"]["reasoning"].startswith("The refunded amount differs")
    # The judge's call is priced as a replay's and added to the item's cost, and so to the run's.
    judge = refund["comparison"]["judge"]
    assert judge["cost_usd"] > 0 and judge["tokens"]["input"] > 0
    expected = cost_of(
        provider_named("openai"), "gpt-4o-mini", StepUsage(judge["tokens"]["input"], judge["tokens"]["output"])
    )
    assert judge["cost_usd"] == pytest.approx(expected.usd)
    replay = cost_of(
        provider_named("openai"), "gpt-4o", StepUsage(refund["tokens"]["input"], refund["tokens"]["output"])
    )
    assert refund["cost_usd"] == pytest.approx((replay.usd or 0) + judge["cost_usd"])
    judged = [i for i in report["items"] if i["comparison"] and "judge" in i["comparison"]]
    assert len(judged) >= 3
    sent = httpx.get(f"{stub.base_url}/__stub/requests").json()
    to_judge = [r for r in sent if r["body"].get("model") == "gpt-4o-mini"]
    assert len(to_judge) == len(judged)
    assert "Same facts" in json.dumps(to_judge[0]["body"])  # the documented rubric, as the system message


def test_a_baseline_is_a_run_of_the_same_mode_and_comparison(
    tmp_path: Path, stub: StubServer, stub_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "b.db")
    demo_data.build(tmp_path / "demo", db=Path(db), long_records=10)
    assert main(["suite", "create", "two", "--conversation", "demo-sql", "--conversation", "demo-code",
                 "--db", db]) == 0  # fmt: skip
    capsys.readouterr()
    exact_code, exact = (main(["suite", "run", "two", "--provider", "openai", "--model", "gpt-4o", "--compare",
                               "exact", "--db", db, "--json"]), json.loads(capsys.readouterr().out))  # fmt: skip
    assert exact_code == 0 and exact["comparison"] == "exact"
    base = ["suite", "run", "two", "--provider", "openai", "--model", "gpt-4o", "--db", db, "--json"]
    # `last` with another comparison finds no run of its kind: refused in one line, nothing recorded.
    assert main([*base, "--compare", "similar:0.8", "--baseline", "last"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no finished run in mode final compared by similar:0.8" in err
    # Naming a run of another mode or comparison is refused too, unless asked; then the report labels it.
    assert main([*base, "--mode", "steps", "--compare", "exact", "--baseline", exact["run_id"]]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "outcomes compare only within one mode and comparison" in err
    assert main([*base, "--mode", "steps", "--baseline", exact["run_id"], "--cross-baseline"]) == 0
    crossed = json.loads(capsys.readouterr().out)
    assert crossed["baseline"] == exact["run_id"] and "across modes or comparisons" in crossed["across"]
    assert main([*base, "--compare", "exact", "--baseline", "last"]) == 0
    assert json.loads(capsys.readouterr().out)["baseline"] == exact["run_id"]
