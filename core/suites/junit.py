"""A suite run's report as JUnit XML: one test case per conversation, so CI systems show it natively.

The rule for a failing test case (``traceloupe suite run --help`` says the same):

- with a baseline, a conversation fails only when it is a **regression** (``matched`` in the
  baseline, ``diverged`` or ``failed`` now): a run with 3 regressions has 3 failures, and a
  conversation that was already broken in the baseline passes, its outcome in ``system-out``;
- without a baseline, every ``diverged`` and ``failed`` conversation fails;
- ``refused`` and ``cancelled`` conversations (nothing was compared) are skipped.

A failure's message names the comparison that judged the final answers, its score (or the judge's
verdict) and the word diff. The suite's ``timestamp`` is ISO 8601 (UTC, without an offset, as the
JUnit schema's pattern has it); its ``<properties>`` give the mode, the comparison and the baseline,
or say that there was none (then a run with diverged conversations still exits 0).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.store.suite_views import BROKEN, ItemView
from core.suites.report import Report

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot carry at all, even escaped: shown as ``\\xNN`` (ids and errors are untrusted)."""


def _text(value: object) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


DIFF_CHARS = 300
"""A word diff in one line is cut here (the run's page and JSON keep all of it)."""
NO_BASELINE = "none: every diverged or failed conversation fails; without one, the exit code is 0 unless nothing ran"


def describe(item: ItemView) -> str:
    """One line: the outcome, where and why it diverged, the provider's error, how the final answers compared."""
    line = str(item.outcome)
    if item.outcome == "diverged":
        line += f" at step {item.diverged_step}" if item.diverged_step is not None else ""
        line += f" ({item.diverged_at})" if item.diverged_at else ""
    if item.reason:
        line += f": {item.reason}"
    if item.error:
        line += f": {' '.join(item.error.split())}"
    if item.detail and item.outcome != "matched":
        line += f"; {answer_text(item.detail)}"
    return line


def answer_text(detail: dict[str, Any]) -> str:
    """A final-answer comparison on one line: its name, the score against the bar (or the judge's verdict), the diff."""
    line = f"compared by {detail.get('comparison', '?')}"
    judge = detail.get("judge")
    score = detail.get("score")
    if isinstance(judge, dict) and judge.get("verdict"):
        reasoning = " ".join(str(judge.get("reasoning") or "").split())
        line += f": judged {judge['verdict']}" + (f" ({reasoning})" if reasoning else "")
    elif isinstance(score, int | float):
        bar = detail.get("threshold")
        line += f": score {score:.2f}" + (f" (bar {bar:g})" if isinstance(bar, int | float) else "")
    changes = [op for op in detail.get("word_diff") or [] if op.get("op") != "equal"]
    if changes:
        diff = " ".join(_change(op) for op in changes)
        line += f"; diff: {diff if len(diff) <= DIFF_CHARS else diff[: DIFF_CHARS - 1] + '…'}"
    return line


def _change(op: dict[str, Any]) -> str:
    removed, added = " ".join(str(op.get("recorded") or "").split()), " ".join(str(op.get("replayed") or "").split())
    return " ".join(part for part in (f"-[{removed}]" if removed else "", f"+[{added}]" if added else "") if part)


def iso_timestamp(ms: int) -> str:
    """Milliseconds since the epoch as JUnit's ``timestamp``: ISO 8601, UTC, to the second."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")


def junit_tree(report: Report) -> ET.ElementTree[ET.Element]:
    """The JUnit XML document of a report."""
    run = report.run
    regressions = {c.conversation_id for c in report.regressions}
    suites = ET.Element("testsuites", name="traceloupe")
    suite = ET.SubElement(suites, "testsuite", name=_text(run.suite), timestamp=iso_timestamp(run.created_at))
    properties = ET.SubElement(suite, "properties")
    baseline = report.baseline
    said_baseline = NO_BASELINE if baseline is None else baseline.run_id
    facts: list[tuple[str, str]] = [
        ("mode", run.mode),
        ("comparison", run.comparison_text),
        ("baseline", said_baseline),
    ]
    if report.across:
        facts.append(("baseline_across", report.across))
    if run.max_cost is not None:  # the spend against the cap, where a CI system shows a suite's properties
        facts += [
            ("cost_usd", f"{report.cost_usd:.6f}"), ("max_cost_usd", str(run.max_cost)),
            ("stopped_by_max_cost", str(report.stopped_by_cost)),
            ("cancelled_by_max_cost", str(report.cancelled_by_cost)),
        ]  # fmt: skip
    for name, value in facts:
        ET.SubElement(properties, "property", name=name, value=_text(value))
    failures = skipped = 0
    for item in run.items:
        case = ET.SubElement(
            suite,
            "testcase",
            name=_text(item.conversation_id),
            classname=_text(f"traceloupe.suite.{run.suite}"),
            time=f"{(item.wall_ms or 0) / 1000:.3f}",
        )
        said = describe(item)
        before = report.baseline_outcome(item.conversation_id)
        failing = item.conversation_id in regressions if report.baseline is not None else item.outcome in BROKEN
        if failing:
            failures += 1
            kind = "regression" if report.baseline is not None else item.outcome
            message = f"was {before} in baseline {report.baseline.run_id}; now {said}" if report.baseline else said
            failure = ET.SubElement(case, "failure", message=_text(message), type=kind)
            failure.text = _text(f"{message}\nrun: {item.run_id or '-'}")
        elif item.outcome not in ("matched", *BROKEN):
            skipped += 1
            ET.SubElement(case, "skipped", message=_text(said))
        out = ET.SubElement(case, "system-out")
        out.text = _text(f"{said} (run {item.run_id or '-'}; baseline: {before or '-'})")
    suite.set("tests", str(len(run.items)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    suite.set("time", f"{report.wall_ms / 1000:.3f}")
    ET.indent(suites)
    return ET.ElementTree(suites)


def write_junit(report: Report, path: str | Path) -> None:
    """Write the report's JUnit XML to ``path`` (UTF-8, with its declaration)."""
    junit_tree(report).write(path, encoding="utf-8", xml_declaration=True)
