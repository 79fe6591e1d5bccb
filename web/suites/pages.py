"""Typed contexts of the suite templates: the list's save control, the suites, one suite, one suite run.

Every trace-derived string (titles, provider errors, divergence reasons) is masked here, as the
conversation pages mask theirs; the templates escape it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.replay.answers import DEFAULT_COMPARISON
from core.store.filters import ConversationFilter, describe
from core.store.suite_views import ItemView
from core.suites import BASELINE_LAST, MODES, OUTCOMES, Progress, Report, SuiteRunView, SuiteSummary, SuiteView
from core.suites.junit import answer_text
from web import masking, urls
from web.list_query import ListQuery
from web.replays.forms import ReplayForm
from web.replays.service import ProviderChoice
from web.suites.service import DEFAULT_CONCURRENCY, MAX_CONCURRENCY
from web.timeline.build import format_ts

SORTS: dict[str, str] = {
    "position": "#",
    "conversation": "conversation",
    "outcome": "outcome",
    "step": "step",
    "tokens": "tokens",
    "cost": "cost",
    "time": "ms",
}
"""The outcome table's sortable columns (query ``sort=``) and their headings, in table order."""
ORDERS = ("asc", "desc")


def list_url(filter: Mapping[str, Any]) -> str | None:
    """The conversation list showing what the suite's filter matches today (None for a suite made from ids)."""
    if "conversations" in filter:
        return None
    return ListQuery.of(ConversationFilter.from_json(filter)).url()


def outcome_text(counts: Mapping[str, int]) -> str:
    """``47 matched · 3 diverged`` (the outcomes present, in their fixed order)."""
    return " · ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts.get(o))


@dataclass(frozen=True, slots=True)
class SuiteRow:
    """One suite on ``/suites``: its size, filter and how its newest run ended."""

    summary: SuiteSummary
    last: Report | None

    @property
    def url(self) -> str:
        return urls.suite(self.summary.name)

    @property
    def filter(self) -> str:
        return masking.mask(describe(self.summary.filter))

    @property
    def last_url(self) -> str | None:
        return urls.suite_run(self.last.run.run_id) if self.last is not None else None

    @property
    def last_text(self) -> str:
        if self.last is None:
            return "never run"
        text = f"{self.last.run.status}: {outcome_text(self.last.counts())}"
        if self.last.baseline is not None:
            text += f" · {len(self.last.regressions)} regression(s)"
        return text


@dataclass(frozen=True, slots=True)
class SuitesPage:
    """``/suites``: every suite."""

    suites: Sequence[SuiteRow]
    index_url: str = urls.INDEX


@dataclass(frozen=True, slots=True)
class RunForm(ReplayForm):
    """A suite's Run form: a replay form with the modes, the runs it may be compared with, how many at once."""

    baselines: Sequence[SuiteRunView]
    modes: Sequence[str] = MODES
    last: str = BASELINE_LAST
    concurrency: int = DEFAULT_CONCURRENCY
    max_concurrency: int = MAX_CONCURRENCY
    comparison: str = str(DEFAULT_COMPARISON)
    comparisons: Sequence[str] = ("exact", str(DEFAULT_COMPARISON), "similar:0.8", "json", "judge:PROVIDER/MODEL")


def run_form(name: str, choices: Sequence[ProviderChoice], runs: Sequence[SuiteRunView]) -> RunForm:
    """A new Run form (a new key on every render)."""
    finished = [r for r in runs if r.status == "finished"]
    return RunForm.fresh(urls.suite_run_start(name), choices, baselines=finished)


@dataclass(frozen=True, slots=True)
class RunRow:
    """One run of a suite, on the suite's page."""

    run: SuiteRunView
    progress: Progress

    @property
    def url(self) -> str:
        return urls.suite_run(self.run.run_id)

    @property
    def started(self) -> str:
        return format_ts(self.run.created_at)

    @property
    def outcomes(self) -> str:
        return outcome_text(self.progress.counts)


@dataclass(frozen=True, slots=True)
class Member:
    """One conversation of a suite."""

    conversation_id: str
    title: str

    @property
    def url(self) -> str:
        return urls.conversation(self.conversation_id)


@dataclass(frozen=True, slots=True)
class SuitePage:
    """``/suites/{name}``: the suite's conversations, its runs and the form that starts one."""

    suite: SuiteView
    members: Sequence[Member]
    runs: Sequence[RunRow]
    form: RunForm
    suites_url: str = urls.SUITES

    @property
    def filter(self) -> str:
        return masking.mask(describe(self.suite.filter))

    @property
    def list_url(self) -> str | None:
        return list_url(self.suite.filter)

    @property
    def more_members(self) -> int:
        return len(self.suite.conversations) - len(self.members)


MAX_MEMBERS_SHOWN = 200


def members(suite: SuiteView, titles: Mapping[str, str]) -> list[Member]:
    """The suite's first conversations, titles masked (a conversation replaced since shows without one)."""
    shown = suite.conversations[:MAX_MEMBERS_SHOWN]
    return [Member(c, masking.mask(titles.get(c, "")) or "(no user text)") for c in shown]


@dataclass(frozen=True, slots=True)
class OutcomeRow:
    """One conversation of a suite run: its outcome, where it diverged, what it cost, where its replay is."""

    item: ItemView
    title: str
    baseline: str | None
    regression: bool
    fix: bool
    reason: str
    error: str
    run_url: str | None
    conversation_url: str
    answer: str = ""
    """How the final answers compared (comparison, score or the judge's verdict, word diff), masked."""

    @property
    def tokens(self) -> int | None:
        if self.item.input_tokens is None and self.item.output_tokens is None:
            return None
        return (self.item.input_tokens or 0) + (self.item.output_tokens or 0)


def item_run_url(run: SuiteRunView, item: ItemView) -> str | None:
    """The page of the replay an item made: a Re-run's page, or the step run's at its diverging step."""
    if item.run_id is None:
        return None
    if run.mode == "steps":
        return urls.step_run(item.run_id, at=item.diverged_step)
    return urls.run(item.run_id)


_VALUES: dict[str, Callable[[OutcomeRow], Any]] = {
    "position": lambda r: r.item.position,
    "conversation": lambda r: r.item.conversation_id,
    "outcome": lambda r: OUTCOMES.index(r.item.outcome),
    "step": lambda r: r.item.diverged_step,
    "tokens": lambda r: r.tokens,
    "cost": lambda r: r.item.cost_usd,
    "time": lambda r: r.item.wall_ms,
}
"""What each sortable column sorts on (None: the row has no value there)."""


def sort_rows(rows: Sequence[OutcomeRow], column: str, order: str) -> list[OutcomeRow]:
    """Rows by ``column`` (ties in suite order); rows without a value last, in either order."""
    value = _VALUES[column]
    valued = sorted((r for r in rows if value(r) is not None), key=value, reverse=order == "desc")
    return valued + [r for r in rows if value(r) is None]


@dataclass(frozen=True, slots=True)
class Totals:
    """The progress bar's figures."""

    total: int
    done: int
    failed: int
    remaining: int
    cost_usd: float

    @property
    def percent(self) -> int:
        return 100 if self.total == 0 else self.done * 100 // self.total


def totals(progress: Progress) -> Totals:
    """Done (any outcome), failed, remaining (pending or running) and the spend so far."""
    failed = progress.counts.get("failed", 0)
    return Totals(progress.total, progress.done, failed, progress.remaining, round(progress.cost_usd, 6))


@dataclass(frozen=True, slots=True)
class SuiteRunPage:
    """``/suite-runs/{id}``: live progress, the outcome table (sorted, filtered) and the changes against a baseline."""

    report: Report
    totals: Totals
    rows: Sequence[OutcomeRow]
    regressions: Sequence[OutcomeRow]
    fixes: Sequence[OutcomeRow]
    sort: str
    order: str
    outcome: str
    counts: Mapping[str, int]
    sorts: Mapping[str, str] = field(default_factory=lambda: SORTS)

    @property
    def run(self) -> SuiteRunView:
        return self.report.run

    @property
    def running(self) -> bool:
        return self.run.status == "running"

    @property
    def url(self) -> str:
        """This page as it is (the live region polls it)."""
        return urls.suite_run(self.run.run_id, sort=self._sort_param, order=self._order_param, outcome=self.outcome)

    @property
    def suite_url(self) -> str:
        return urls.suite(self.run.suite)

    @property
    def api_url(self) -> str:
        return urls.api_suite_run(self.run.run_id)

    @property
    def baseline_url(self) -> str | None:
        baseline = self.report.baseline
        return urls.suite_run(baseline.run_id) if baseline is not None else None

    @property
    def started(self) -> str:
        return format_ts(self.run.created_at)

    @property
    def _sort_param(self) -> str | None:
        return None if self.sort == "position" else self.sort

    @property
    def _order_param(self) -> str | None:
        return None if self.order == "asc" else self.order

    def sort_url(self, column: str) -> str:
        """The table sorted by ``column``: ascending first, the other way on a second click."""
        order = "desc" if column == self.sort and self.order == "asc" else None
        sort = None if column == "position" else column
        return urls.suite_run(self.run.run_id, sort=sort, order=order, outcome=self.outcome)

    def sorted_as(self, column: str) -> str | None:
        """``ascending``/``descending`` for the column the table is sorted by (its aria-sort), else None."""
        if column != self.sort:
            return None
        return "ascending" if self.order == "asc" else "descending"

    def outcome_url(self, outcome: str | None) -> str:
        """The table showing one outcome (every outcome when None), in the same order."""
        return urls.suite_run(self.run.run_id, sort=self._sort_param, order=self._order_param, outcome=outcome)

    @property
    def outcomes(self) -> Sequence[str]:
        """The outcomes the run has (the filter's choices)."""
        return [o for o in OUTCOMES if self.counts.get(o)]


def suite_run_page(
    report: Report, progress: Progress, titles: Mapping[str, str], *, sort: str, order: str, outcome: str
) -> SuiteRunPage:
    """The page for a run's report; ``sort``, ``order`` and ``outcome`` come checked from the allowlists."""
    run = report.run
    regressed = {c.conversation_id for c in report.regressions}
    fixed = {c.conversation_id for c in report.fixes}
    rows = [
        OutcomeRow(
            item=item,
            title=masking.mask(titles.get(item.conversation_id, "")) or "(no user text)",
            baseline=report.baseline_outcome(item.conversation_id),
            regression=item.conversation_id in regressed,
            fix=item.conversation_id in fixed,
            reason=masking.mask(item.reason or ""),
            error=masking.mask(item.error or ""),
            run_url=item_run_url(run, item),
            conversation_url=urls.conversation(item.conversation_id),
            answer=masking.mask(answer_text(item.detail)) if item.detail else "",
        )
        for item in run.items
    ]
    shown = sort_rows([r for r in rows if not outcome or r.item.outcome == outcome], sort, order)
    return SuiteRunPage(
        report=report,
        totals=totals(progress),
        rows=shown,
        regressions=[r for r in rows if r.regression],
        fixes=[r for r in rows if r.fix],
        sort=sort,
        order=order,
        outcome=outcome,
        counts=report.counts(),
    )
