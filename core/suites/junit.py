"""A suite run's report as JUnit XML: one test case per conversation, so CI systems show it natively.

The rule for a failing test case (``traceloupe suite run --help`` says the same):

- with a baseline, a conversation fails only when it is a **regression** (``matched`` in the
  baseline, ``diverged`` or ``failed`` now): a run with 3 regressions has 3 failures, and a
  conversation that was already broken in the baseline passes, its outcome in ``system-out``;
- without a baseline, every ``diverged`` and ``failed`` conversation fails;
- ``refused`` and ``cancelled`` conversations (nothing was compared) are skipped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from core.suites.report import Report
from core.suites.views import BROKEN, ItemView

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot carry at all, even escaped: shown as ``\\xNN`` (ids and errors are untrusted)."""


def _text(value: object) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def describe(item: ItemView) -> str:
    """One line: the outcome, where and why it diverged, the provider's error."""
    line = str(item.outcome)
    if item.outcome == "diverged":
        line += f" at step {item.diverged_step}" if item.diverged_step is not None else ""
        line += f" ({item.diverged_at})" if item.diverged_at else ""
    if item.reason:
        line += f": {item.reason}"
    if item.error:
        line += f": {' '.join(item.error.split())}"
    return line


def junit_tree(report: Report) -> ET.ElementTree[ET.Element]:
    """The JUnit XML document of a report."""
    run = report.run
    regressions = {c.conversation_id for c in report.regressions}
    suites = ET.Element("testsuites", name="traceloupe")
    suite = ET.SubElement(suites, "testsuite", name=_text(run.suite), timestamp=str(run.created_at))
    if run.max_cost is not None:  # the spend against the cap, where a CI system shows a suite's properties
        properties = ET.SubElement(suite, "properties")
        for name, value in (("cost_usd", f"{report.cost_usd:.6f}"), ("max_cost_usd", str(run.max_cost)),
                            ("stopped_by_max_cost", str(report.stopped_by_cost)),
                            ("cancelled_by_max_cost", str(report.cancelled_by_cost))):  # fmt: skip
            ET.SubElement(properties, "property", name=name, value=value)
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
