"""``Suites``: the suites API over an open store, one transaction per call (what the CLI and the dashboard use)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Required, TypedDict, Unpack

from core.errors import MisuseError, UnknownNameError
from core.replay.answers import DEFAULT_COMPARISON, AnswerComparison
from core.store import ConversationQuery, Store
from core.store import suites as stored
from core.store.filters import ConversationFilter
from core.store.query import MAX_PAGE
from core.store.suite_views import MODES, ItemView, Mode, Progress, SuiteRunView, SuiteSummary, SuiteView
from core.store.suites import NewSuiteRun
from core.suites.report import Report, build_report


class RunSettings(TypedDict, total=False):
    """What a suite run is asked for, as :meth:`Suites.claim_run` takes it (its defaults apply to the rest)."""

    provider: Required[str]
    model: Required[str]
    mode: Mode
    concurrency: int
    max_cost: float | None
    baseline: str | None
    comparison: AnswerComparison
    cross_baseline: bool


class Suites:
    """Suites and suite runs in a store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def create(
        self, name: str, *, query: ConversationQuery | None = None, conversations: Sequence[str] | None = None
    ) -> SuiteView:
        """Save a suite of the conversations ``query`` matches now (the list's order) or of ``conversations``."""
        if (query is None) == (conversations is None):
            raise MisuseError("a suite is made from a filter or from a list of conversations, one of the two")
        if conversations is not None:
            ids = list(dict.fromkeys(conversations))
            filter: dict[str, Any] = {"conversations": ids}
        else:
            assert query is not None
            chosen = ConversationFilter.of_query(query)
            ids = [
                c.conversation_id for c in self.store.iter_conversations(chosen.query(sort=query.sort, limit=MAX_PAGE))
            ]
            filter = chosen.to_json()
        if not ids:
            raise MisuseError("no conversation matches: a suite needs at least one; nothing saved")
        return stored.create_suite(self.store.engine, name, filter, ids)

    def get(self, name: str) -> SuiteView:
        """A suite and its conversations; UnknownNameError if there is none."""
        return stored.get_suite(self.store.engine, name)

    def summaries(self) -> tuple[SuiteSummary, ...]:
        """Every suite by name."""
        return stored.list_suites(self.store.engine)

    def runs(self, name: str) -> tuple[SuiteRunView, ...]:
        """A suite's runs, newest first (without their items); UnknownNameError for an unknown suite."""
        return stored.runs_of(self.store.engine, name)

    def new_run(self, name: str, **settings: Unpack[RunSettings]) -> SuiteRunView:
        """Record a suite run, every conversation ``pending``; ``baseline`` is a suite run id or ``last``."""
        return self.claim_run(name, idempotency_key=None, **settings)[0]

    def claim_run(
        self,
        name: str,
        *,
        provider: str,
        model: str,
        idempotency_key: str | None,
        mode: Mode = "final",
        concurrency: int = 4,
        max_cost: float | None = None,
        baseline: str | None = None,
        comparison: AnswerComparison = DEFAULT_COMPARISON,
        cross_baseline: bool = False,
        started_by: str | None = None,
    ) -> tuple[SuiteRunView, bool]:
        """As :meth:`new_run`, and True when this call recorded the run: False returns the run the key names.

        A baseline is a run of the same mode and comparison (``last`` finds the newest such); another one
        is refused unless ``cross_baseline`` (then the report labels it).
        """
        if mode not in MODES:
            raise MisuseError(f"--mode is one of: {', '.join(MODES)}")
        if concurrency < 1:
            raise MisuseError("--concurrency must be at least 1")
        if max_cost is not None and not max_cost >= 0:
            raise MisuseError("--max-cost must be a non-negative number of US dollars")
        new = NewSuiteRun(
            name, provider, model.strip(), mode, str(comparison), concurrency, max_cost, idempotency_key, started_by
        )
        return stored.claim_run(self.store.engine, new, baseline=baseline, cross_baseline=cross_baseline)

    def run(self, run_id: str) -> SuiteRunView:
        """A suite run with its items; UnknownNameError if there is none."""
        return stored.get_run(self.store.engine, run_id)

    def unfinished(self, name: str) -> str | None:
        """The newest run of the suite still running (to resume), or None."""
        return stored.unfinished(self.store.engine, name)

    def open_items(self, run_id: str) -> list[int]:
        """The items of a run without an outcome yet."""
        return stored.open_items(self.store.engine, run_id)

    def items_done(self, run_id: str, *, exclude: Collection[int] = ()) -> tuple[ItemView, ...]:
        """The items of a run that have an outcome, but those in ``exclude`` (already shown), in suite order."""
        return stored.items_done(self.store.engine, run_id, exclude)

    def progress(self, run_id: str) -> Progress:
        """Item counts by outcome and the cost so far."""
        return stored.progress(self.store.engine, run_id)

    def finish_if_done(self, run_id: str) -> None:
        """Mark the run finished when every item has an outcome (a worker may have died just before doing it)."""
        stored.finish_run_if_done(self.store.engine, run_id)

    def report(self, run_id: str) -> Report:
        """The run's report, compared with the baseline it was started with."""
        return build_report(*stored.run_and_baseline(self.store.engine, run_id))


def resolve_run(suites: Suites, name: str, run_id: str | None) -> SuiteRunView:
    """A run of suite ``name`` by id (the newest run when None); UnknownNameError when it is not one of its runs."""
    runs = suites.runs(name)
    if run_id is None:
        if not runs:
            raise UnknownNameError(f"suite {name!r} has no run yet")
        return suites.run(runs[0].run_id)
    if all(r.run_id != run_id for r in runs):
        raise UnknownNameError(f"suite {name!r} has no run {run_id!r}")
    return suites.run(run_id)
