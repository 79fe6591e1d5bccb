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
from core.errors import MisuseError
from core.jobs import JobQueue
from core.replay.endpoints import PROVIDER_ENV
from core.store import ConversationQuery, Store
from core.store.engine import read_transaction
from core.store.query import MAX_PAGE, summary_select, to_summary
from core.store.tables import CONVERSATIONS
from core.suites import BASELINE_LAST, MODES, Mode, SuiteRunView, Suites
from core.suites.runner import enqueue_open
from web.runs.models import known_model, unknown_model_message
from web.runs.service import IDEMPOTENCY_KEY, KeyConflict, ProviderChoice

DEFAULT_CONCURRENCY = 4
"""As ``traceloupe suite run``'s default."""
MAX_CONCURRENCY = 64
CONCURRENCY = fields.IntRule("concurrency", 1, MAX_CONCURRENCY)
COUNT_CAP = 200
"""The list's "save these N" counts matches up to here, so a filtered list page reads about as many rows as
it shows; past it the control says "200+", and saving still takes every match."""
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


def parse_run_request(
    provider: str,
    model: str,
    mode: str,
    concurrency: str,
    max_cost: str,
    baseline: str,
    *,
    model_as_typed: bool = False,
) -> RunRequest:
    """The form's text fields checked and converted; MisuseError says which one is wrong."""
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
    return RunRequest(provider, model.strip(), chosen_mode, workers, cap, chosen, model_as_typed)


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

    def start(self, name: str, request: RunRequest, idempotency_key: str) -> SuiteRunView:
        """Record a suite run and queue its jobs; the run already started when the key was used before.

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
        )  # fmt: skip
        if run.suite != name:
            raise KeyConflict("this idempotency key belongs to a run of another suite")
        if not created:
            return self.suites.run(run.run_id)
        enqueue_open(self.queue, self.suites, run)
        return run

    def _check_provider(self, request: RunRequest) -> None:
        if request.provider not in PROVIDER_ENV:
            raise MisuseError(f"unknown provider {request.provider!r}; known: {', '.join(PROVIDER_ENV)}")
        choice = next((c for c in self.choices() if c.provider == request.provider), None)
        if choice is None or not choice.available:
            reason = choice.reason if choice is not None else "it cannot replay"
            raise MisuseError(f"{request.provider} is unavailable: {reason}")
        if not request.model:
            raise MisuseError("a model is needed")
        if not request.model_as_typed and not known_model(request.provider, request.model):
            raise MisuseError(unknown_model_message(request.provider, request.model))


def count_matching(store: Store, query: ConversationQuery, cap: int = COUNT_CAP) -> int:
    """How many conversations ``query`` matches, counted up to ``cap`` (more reads as ``cap``)."""
    return store.count_conversations(query, cap)


def titles(store: Store, conversation_ids: Iterable[str]) -> dict[str, str]:
    """The titles of these conversations (those still stored), read in pages of ids."""
    ids = list(dict.fromkeys(conversation_ids))
    out: dict[str, str] = {}
    column = CONVERSATIONS.c.conversation_id
    with read_transaction(store.engine) as conn:
        for start in range(0, len(ids), MAX_PAGE):
            rows = conn.execute(summary_select().where(column.in_(ids[start : start + MAX_PAGE]))).all()
            for row in rows:
                summary = to_summary(row)
                out[summary.conversation_id] = summary.title or ""
    return out
