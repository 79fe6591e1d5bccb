"""``Suites``: the suites API over an open store, one transaction per call (what the CLI and the dashboard use)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Required, TypedDict, Unpack

from sqlalchemy import Connection

from core.errors import MisuseError, UnknownNameError
from core.replay.answers import DEFAULT_COMPARISON, AnswerComparison
from core.store import ConversationQuery, Store
from core.store.engine import claim_by_key, read_transaction, write_transaction
from core.store.filters import ConversationFilter
from core.store.query import MAX_PAGE
from core.suites import storage
from core.suites.report import Report, build_report
from core.suites.views import MODES, ItemView, Mode, Progress, SuiteRunView, SuiteSummary, SuiteView

BASELINE_LAST = "last"
"""``--baseline last``: the newest finished run of the same suite, mode and comparison before this one."""


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
        with write_transaction(self.store.engine) as conn:
            return storage.create_suite(conn, name, filter, ids)

    def get(self, name: str) -> SuiteView:
        """A suite and its conversations; UnknownNameError if there is none."""
        with read_transaction(self.store.engine) as conn:
            return storage.get_suite(conn, name)

    def summaries(self) -> tuple[SuiteSummary, ...]:
        """Every suite by name."""
        with read_transaction(self.store.engine) as conn:
            return storage.list_suites(conn)

    def runs(self, name: str) -> tuple[SuiteRunView, ...]:
        """A suite's runs, newest first (without their items); UnknownNameError for an unknown suite."""
        with read_transaction(self.store.engine) as conn:
            storage.get_suite(conn, name)
            return storage.runs_of(conn, name)

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
    ) -> tuple[SuiteRunView, bool]:
        """As :meth:`new_run`, and True when this call recorded the run: False returns the run the key names.

        The key column is unique, so two processes posting one form record one run: the loser of the
        race on the constraint reads the winner's run. A baseline is a run of the same mode and comparison
        (``last`` finds the newest such); another one is refused unless ``cross_baseline`` (then the report
        labels it).
        """
        if mode not in MODES:
            raise MisuseError(f"--mode is one of: {', '.join(MODES)}")
        if concurrency < 1:
            raise MisuseError("--concurrency must be at least 1")
        if max_cost is not None and not max_cost >= 0:
            raise MisuseError("--max-cost must be a non-negative number of US dollars")

        def claim(conn: Connection) -> tuple[SuiteRunView, bool]:
            known = None if idempotency_key is None else storage.run_by_key(conn, idempotency_key)
            if known is not None:
                return known, False
            how = str(comparison)
            if baseline == BASELINE_LAST:
                baseline_id = storage.last_finished(conn, name, mode=mode, comparison=how)
                if baseline_id is None:
                    storage.get_suite(conn, name)
                    raise MisuseError(
                        f"--baseline last: suite {name!r} has no finished run in mode {mode} compared by {how} yet"
                    )
            else:
                baseline_id = baseline
                if baseline is not None and not cross_baseline:
                    _same_kind(storage.get_run(conn, baseline, items=False), mode, how)
            run = storage.create_run(
                conn, name, provider=provider, model=model.strip(), mode=mode, concurrency=concurrency,
                max_cost=max_cost, baseline_run_id=baseline_id, idempotency_key=idempotency_key, comparison=how,
            )  # fmt: skip
            return run, True

        return claim_by_key(self.store.engine, claim, idempotency_key, storage.run_by_key)

    def run(self, run_id: str) -> SuiteRunView:
        """A suite run with its items; UnknownNameError if there is none."""
        with read_transaction(self.store.engine) as conn:
            return storage.get_run(conn, run_id)

    def unfinished(self, name: str) -> str | None:
        """The newest run of the suite still running (to resume), or None."""
        with read_transaction(self.store.engine) as conn:
            storage.get_suite(conn, name)
            return storage.unfinished(conn, name)

    def open_items(self, run_id: str) -> list[int]:
        """The items of a run without an outcome yet."""
        with read_transaction(self.store.engine) as conn:
            return storage.open_items(conn, run_id)

    def items_done(self, run_id: str, *, exclude: Collection[int] = ()) -> tuple[ItemView, ...]:
        """The items of a run that have an outcome, but those in ``exclude`` (already shown), in suite order."""
        with read_transaction(self.store.engine) as conn:
            return storage.items_done(conn, run_id, exclude)

    def progress(self, run_id: str) -> Progress:
        """Item counts by outcome and the cost so far."""
        with read_transaction(self.store.engine) as conn:
            return storage.progress(conn, run_id)

    def finish_if_done(self, run_id: str) -> None:
        """Mark the run finished when every item has an outcome (a worker may have died just before doing it)."""
        with write_transaction(self.store.engine) as conn:
            storage.finish_run_if_done(conn, run_id)

    def report(self, run_id: str) -> Report:
        """The run's report, compared with the baseline it was started with."""
        with read_transaction(self.store.engine) as conn:
            run = storage.get_run(conn, run_id)
            baseline = None if run.baseline_run_id is None else storage.get_run(conn, run.baseline_run_id)
        return build_report(run, baseline)


def _same_kind(baseline: SuiteRunView, mode: str, comparison: str) -> None:
    """MisuseError (one line) when a chosen baseline was made in another mode or with another comparison."""
    if baseline.mode == mode and baseline.comparison == comparison:
        return
    raise MisuseError(
        f"baseline {baseline.run_id} is mode {baseline.mode} compared by {baseline.comparison_text}, this run mode "
        f"{mode} compared by {comparison}: outcomes compare only within one mode and comparison "
        "(--cross-baseline compares them anyway, labelled)"
    )


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
