"""Suites: named sets of stored conversations replayed in bulk on the job queue, with a regression report.

``Suites(store)`` (``core.suites.api``) makes and reads suites and their runs; ``run_item``
(``core.suites.execute``) is the job that replays one conversation; ``build_report`` compares a
run with a baseline run; ``write_junit`` writes the report for CI.
"""

from core.store.suite_views import (
    MODES,
    OUTCOMES,
    ItemView,
    Mode,
    Outcome,
    Progress,
    SuiteRunView,
    SuiteSummary,
    SuiteView,
)
from core.store.suites import BASELINE_LAST
from core.suites.api import Suites
from core.suites.execute import run_item
from core.suites.junit import write_junit
from core.suites.report import EXIT_NOTHING_RAN, EXIT_OK, EXIT_REGRESSION, Report, build_report

__all__ = [
    "BASELINE_LAST",
    "EXIT_NOTHING_RAN",
    "EXIT_OK",
    "EXIT_REGRESSION",
    "MODES",
    "OUTCOMES",
    "ItemView",
    "Mode",
    "Outcome",
    "Progress",
    "Report",
    "SuiteRunView",
    "SuiteSummary",
    "SuiteView",
    "Suites",
    "build_report",
    "run_item",
    "write_junit",
]
