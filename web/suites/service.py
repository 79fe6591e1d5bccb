"""Suites for the dashboard: save the list's matches as a suite, start a suite run once per idempotency key.

A suite run is recorded by ``core.suites`` and its jobs are queued on the server's job queue (the
one Re-run uses), exactly as ``traceloupe suite run`` queues them; the request answers at once
and the server's workers (or ``traceloupe worker`` processes on PostgreSQL) replay the
conversations. The form's idempotency key is stored with the suite run (a unique column): the same
key twice, from two concurrent requests or two server processes, is the same suite run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from core import fields
from core.errors import MisuseError, UnknownNameError
from core.jobs import JobQueue
from core.providers import provider_named
from core.replay.answers import DEFAULT_COMPARISON, AnswerComparison, parse_comparison
from core.replay.judge import check_judge
from core.store import ConversationQuery, Store
from core.suites import BASELINE_LAST, MODES, Mode, SuiteRunView, Suites
from core.suites.runner import enqueue_open
from web.replays.models import known_model, unknown_model_message
from web.replays.service import IDEMPOTENCY_KEY, KeyConflict, ProviderChoice

DEFAULT_CONCURRENCY = 4
"""As ``traceloupe suite run``'s default."""
MAX_CONCURRENCY = 64
CONCURRENCY = fields.IntRule("concurrency", 1, MAX_CONCURRENCY)
_RUN_ID = re.compile(r"^[0-9a-f]{32}$")


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What the suite's Run form asks for, parsed (numbers as numbers, the baseline as a run id or ``last``)."""

    provider: str
    model: str
    mode: Mode
    concurrency: int
    max_cost: float | None
    baseline: str | None
    model_as_typed: bool = False
    comparison: AnswerComparison = DEFAULT_COMPARISON


def parse_run_request(
    provider: str,
    model: str,
    mode: str,
    concurrency: str,
    max_cost: str,
    baseline: str,
    *,
    model_as_typed: bool = False,
    compare: str = "",
) -> RunRequest:
    """The form's text fields checked and converted; MisuseError says which one is wrong."""
    comparison = parse_comparison(compare) if compare.strip() else DEFAULT_COMPARISON
    if mode not in MODES:
        raise MisuseError(f"mode is one of: {', '.join(MODES)}")
    fields.PROVIDER.check(provider)
    fields.MODEL.check(model)
    fields.ID.check(baseline)
    workers = CONCURRENCY.parse(concurrency) or DEFAULT_CONCURRENCY
    cap = fields.MAX_COST.parse(max_cost)
    chosen = baseline.strip() or None
    if chosen is not None and chosen != BASELINE_LAST and not _RUN_ID.match(chosen):
        raise MisuseError("the baseline is 'last' or the id of one of this suite's runs")
    chosen_mode: Mode = "steps" if mode == "steps" else "final"
    return RunRequest(provider, model.strip(), chosen_mode, workers, cap, chosen, model_as_typed, comparison)


class SuiteStarts:
    """Makes suites from the list's filters and starts suite runs on the server's job queue."""

    def __init__(self, store: Store, queue: JobQueue, choices: Callable[[], Sequence[ProviderChoice]]) -> None:
        self.suites = Suites(store)
        self.store = store
        self.queue = queue
        self.choices = choices

    def create(self, name: str, query: ConversationQuery) -> str:
        """Save the conversations ``query`` matches now as suite ``name`` (the engine's create); its name."""
        fields.SUITE_NAME.check(name)
        return self.suites.create(name, query=query).name

    def start(
        self, name: str, request: RunRequest, idempotency_key: str, started_by: str | None = None
    ) -> SuiteRunView:
        """Record a suite run (by the account ``started_by``) and queue its jobs; the run already started when the
        key was used before.

        Raises (nothing recorded): MisuseError for a bad key, provider, model or baseline,
        UnknownNameError for an unknown suite or baseline, KeyConflict for a key of another suite.
        """
        if not IDEMPOTENCY_KEY.fullmatch(idempotency_key):
            raise MisuseError("the form's idempotency key is missing or malformed; reload the page and try again")
        self._check_provider(request)
        self.suites.get(name)  # 404 for an unknown suite before anything else is said
        run, created = self.suites.claim_run(
            name, provider=request.provider, model=request.model, mode=request.mode, idempotency_key=idempotency_key,
            concurrency=request.concurrency, max_cost=request.max_cost, baseline=request.baseline,
            comparison=request.comparison, started_by=started_by,
        )  # fmt: skip
        if run.suite != name:
            raise KeyConflict("this idempotency key belongs to a run of another suite")
        if not created:
            return self.suites.run(run.run_id)
        enqueue_open(self.queue, self.suites, run)
        return run

    def _check_provider(self, request: RunRequest) -> None:
        try:
            provider = provider_named(request.provider)
        except UnknownNameError as exc:
            raise MisuseError(str(exc)) from None
        choice = next((c for c in self.choices() if c.provider == request.provider), None)
        if choice is None or not choice.available:
            reason = choice.reason if choice is not None else "it cannot replay"
            raise MisuseError(f"{request.provider} is unavailable: {reason}")
        if not request.model:
            raise MisuseError("a model is needed")
        if not request.model_as_typed and not known_model(provider, request.model):
            raise MisuseError(unknown_model_message(provider, request.model))
        if request.comparison.kind == "judge":
            check_judge(request.comparison)


def titles(store: Store, conversation_ids: Iterable[str]) -> dict[str, str]:
    """The titles of these conversations (those still stored)."""
    return {cid: summary.title or "" for cid, summary in store.get_summaries(conversation_ids).items()}
