"""The JUnit rule, read back with junitparser: failures are regressions with a baseline, divergences and failures
without one; refused and cancelled are skipped; ids that XML cannot carry are escaped, not fatal."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from junitparser import Failure, JUnitXml, Skipped

from core.suites import ItemView, SuiteRunView, build_report, write_junit


def _item(n: int, conversation_id: str, outcome: str, **more: object) -> ItemView:
    fields: dict[str, object] = {
        "item_pk": n, "conversation_id": conversation_id, "position": n, "outcome": outcome, "attempt": 1,
        "diverged_step": None, "diverged_at": None, "reason": None, "error": None, "run_id": f"r{n}",
        "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.001, "cost_note": None, "started_at": 1, "finished_at": 2,
        "wall_ms": 250,
    }  # fmt: skip
    fields.update(more)
    return ItemView(**fields)  # type: ignore[arg-type]


def _run(run_id: str, items: list[ItemView]) -> SuiteRunView:
    return SuiteRunView(
        run_id=run_id, suite="qa", provider="openai", model="gpt-4o", mode="steps", concurrency=2, max_cost=None,
        baseline_run_id=None, status="finished", created_at=1_000, finished_at=3_000, items=tuple(items),
    )  # fmt: skip


BEFORE = _run(
    "base",
    [_item(0, "a", "matched"), _item(1, "b", "matched"), _item(2, "c", "diverged"), _item(3, "d", "matched"),
     _item(4, "e", "failed"), _item(5, "f", "matched")],
)  # fmt: skip
NOW = _run(
    "now",
    [
        _item(0, "a", "diverged", diverged_step=2, diverged_at="m2", reason="different_arguments"),
        _item(1, "b", "failed", reason="http_error", error="HTTP 500 from the stub"),
        _item(2, "c", "diverged", diverged_step=1, reason="different_tool"),
        _item(3, "d", "matched"),
        _item(4, "e", "matched"),
        _item(5, "f", "cancelled", reason="max_cost", run_id=None),
    ],
)


def _read(path: Path) -> dict[str, object]:
    xml = JUnitXml.fromfile(str(path))
    suite = next(iter(xml))
    cases = {case.name: case for case in suite}
    return {"suite": suite, "cases": cases}


def test_with_a_baseline_only_regressions_fail(tmp_path: Path) -> None:
    report = build_report(NOW, BEFORE)
    assert [c.conversation_id for c in report.regressions] == ["a", "b"]
    assert [c.conversation_id for c in report.fixes] == ["e"]
    write_junit(report, tmp_path / "junit.xml")
    read = _read(tmp_path / "junit.xml")
    suite, cases = read["suite"], read["cases"]
    assert (suite.tests, suite.failures, suite.skipped, suite.errors) == (6, 2, 1, 0)  # type: ignore[attr-defined]
    failing = {n for n, c in cases.items() if any(isinstance(r, Failure) for r in c.result)}  # type: ignore[attr-defined]
    assert failing == {"a", "b"}  # "c" was diverged in the baseline too: known, not a regression
    first = next(r for r in cases["a"].result if isinstance(r, Failure))  # type: ignore[index]
    assert "was matched in baseline base" in first.message and "step 2" in first.message
    assert "HTTP 500" in next(r for r in cases["b"].result if isinstance(r, Failure)).message  # type: ignore[index]
    assert any(isinstance(r, Skipped) for r in cases["f"].result)  # type: ignore[index]


def test_without_a_baseline_every_divergence_and_failure_fails(tmp_path: Path) -> None:
    write_junit(build_report(NOW, None), tmp_path / "junit.xml")
    read = _read(tmp_path / "junit.xml")
    assert read["suite"].failures == 3  # type: ignore[attr-defined]


def test_ids_and_errors_xml_cannot_carry_are_escaped(tmp_path: Path) -> None:
    hostile = replace(NOW.items[1], conversation_id="b\x1b]52;c;bad\x07\x00", error="line\x01break <tag> & \ud800")
    run = replace(NOW, items=(hostile,))
    write_junit(build_report(run, None), tmp_path / "junit.xml")
    cases = _read(tmp_path / "junit.xml")["cases"]
    assert list(cases) == ["b\\x1b]52;c;bad\\x07\\x00"]  # type: ignore[call-overload]
    failure = next(r for r in cases["b\\x1b]52;c;bad\\x07\\x00"].result if isinstance(r, Failure))  # type: ignore[index]
    assert "line\\x01break <tag> & \\xd800" in failure.message


def test_a_capped_run_gives_its_spend_against_the_cap_as_suite_properties(tmp_path: Path) -> None:
    stopped = _item(6, "g", "cancelled", reason="max_cost", error="step 2 not sent: would pass --max-cost 0.01")
    capped = replace(NOW, max_cost=0.01, items=(*NOW.items, stopped))
    write_junit(build_report(capped, None), tmp_path / "junit.xml")
    suite = _read(tmp_path / "junit.xml")["suite"]
    properties = {p.name: p.value for p in suite.properties()}  # type: ignore[attr-defined]
    spend = {
        name: properties[name] for name in ("cost_usd", "max_cost_usd", "stopped_by_max_cost", "cancelled_by_max_cost")
    }
    assert spend == {"cost_usd": "0.007000", "max_cost_usd": "0.01", "stopped_by_max_cost": "1",
                     "cancelled_by_max_cost": "1"}  # fmt: skip
    assert "step 2 not sent" in next(r for r in _read(tmp_path / "junit.xml")["cases"]["g"].result).message  # type: ignore[index]
