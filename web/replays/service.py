"""Replays for the dashboard: a request records the run, the job queue sends it.

The POST handler calls :meth:`RunService.submit`, which builds the body, claims the run
under the form's idempotency key (a unique column: the same key twice, even from two
concurrent requests or two server processes, is one run and one provider call) and queues
a ``run`` job (``core.jobs``); the handler answers at once with the run's live status partial.
:meth:`RunService.submit_steps` does the same for a step replay of one turn (a ``step_run`` job).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from core import fields
from core.errors import MisuseError, UnknownNameError
from core.jobs import JobQueue, JobSettings, env_limits, queue_for
from core.jobs.replay_tasks import RUN_TASK, STEP_RUN_TASK
from core.providers import provider_named
from core.replay.answers import DEFAULT_COMPARISON, parse_comparison
from core.replay.endpoints import availability
from core.replay.run import DEFAULT_TIMEOUT, prepare, start
from core.replay.sent_tools import GivenTools
from core.replay.steps import plan_steps, start_steps
from core.store import RunView, Store
from core.store.step_runs import StepRunView
from web.replays.models import known_model, unknown_model_message

log = logging.getLogger("traceloupe.web.runs")

R = TypeVar("R", RunView, StepRunView)

IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9_-]{16,128}$")


class ReplayBusy(MisuseError):
    """Too many replays are waiting already; nothing was recorded."""


class KeyConflict(MisuseError):
    """The idempotency key names a run of another conversation."""


class UnknownModel(MisuseError):
    """The model is outside the provider's known families and was not typed on purpose; nothing was recorded."""


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    """One option of the provider select: safe to show (names the key variable, never its value)."""

    provider: str
    available: bool
    key_var: str
    default_model: str
    reason: str


@dataclass(frozen=True, slots=True)
class ReplayAsk:
    """What every replay form asks for: a conversation replayed with a provider and model (``model_as_typed``: the
    reader typed it on purpose), the press's idempotency key, tools sent instead of the stored ones, and who asked."""

    conversation_id: str
    provider: str
    model: str
    idempotency_key: str
    model_as_typed: bool = False
    tools: GivenTools | None = None
    started_by: str | None = None


class RunService:
    """Starts replays for the dashboard and runs them off the request thread, through the job queue.

    ``workers`` bounds the jobs this process runs at once; ``max_pending`` bounds the runs
    accepted but not finished (queued included, in every process sharing the database): past
    it a new run is refused before anything is recorded. ``environ`` is read at every send, so a
    key set or removed while the server runs takes effect on the next run. ``queue``: one made
    elsewhere (started and stopped by its owner); by default the store's queue, which :meth:`start`
    starts (the app does at start-up) and :meth:`shutdown` stops.
    ``rate_limit_wait``: seconds a run may wait out 429s; 0 by default, so a Re-run shows the provider's
    429 at once (the reviewer is watching and decides), where queued batches wait it out.
    """

    def __init__(
        self,
        store: Store,
        *,
        workers: int = 2,
        max_pending: int = 16,
        timeout: float = DEFAULT_TIMEOUT,
        environ: Callable[[], Mapping[str, str]] = lambda: os.environ,
        queue: JobQueue | None = None,
        rate_limit_wait: float = 0.0,
    ) -> None:
        if workers < 1 or max_pending < workers:
            raise ValueError("need workers >= 1 and max_pending >= workers")
        self.store = store
        self.timeout = timeout
        self._environ = environ
        self._max_pending = max_pending
        self._rate_limit_wait = rate_limit_wait
        self._owns_queue = queue is None
        if queue is None:
            settings = JobSettings(
                concurrency=workers, provider_limits=env_limits(), send_timeout=timeout, environ=environ
            )
            queue = queue_for(store, settings)
        self.queue = queue

    def start(self) -> None:
        """Start this process's job workers (they also take up the jobs a stopped server left)."""
        if self._owns_queue:
            self.queue.start()

    def choices(self) -> list[ProviderChoice]:
        """Every replayable provider, with whether its key is set and a default model."""
        return [
            ProviderChoice(a.provider.name, a.available, a.key_var, a.provider.default_model, a.reason)
            for a in availability(self._environ())
        ]

    def submit(self, ask: ReplayAsk, *, upto: str | None) -> RunView:
        """Record a run and queue its send; the recorded run when the key was used already.

        ``ask.model_as_typed``: the reader typed the model on purpose, so a name outside the provider's
        families is sent (the run shows a warning) instead of refused.

        Raises (nothing recorded): UnknownNameError, ProviderUnavailable, ReplayBusy, KeyConflict,
        UnknownModel, MisuseError for a malformed key.
        """
        _check_form(ask, upto)
        environ = self._environ()
        prepared = prepare(
            self.store, ask.conversation_id, ask.provider, ask.model, upto=upto, environ=environ, tools=ask.tools
        )
        self._check_room()
        run, created = start(self.store, prepared, idempotency_key=ask.idempotency_key, started_by=ask.started_by)

        def unqueued(run_id: str) -> RunView:
            return self.store.finish_run(run_id, status="error", error="the replay could not be queued")

        return self._queue_new(ask, run, created and prepared.refusal is None, RUN_TASK, unqueued)

    def submit_steps(
        self,
        ask: ReplayAsk,
        *,
        turn: str | None,
        max_steps: int | None = None,
        max_cost: float | None = None,
        compare: str = "",
    ) -> StepRunView:
        """Record a step replay of one turn (the last with a trace when ``turn`` is None) and queue it.

        The same rules as :meth:`submit`: the recorded run when the key was used already, nothing
        recorded when it raises (the same errors, and MisuseError for a turn that cannot be replayed).
        """
        _check_form(ask, turn)
        comparison = parse_comparison(compare) if compare.strip() else DEFAULT_COMPARISON
        plan = plan_steps(
            self.store, ask.conversation_id, ask.provider, ask.model,
            turn=turn, max_steps=max_steps, max_cost=max_cost, environ=self._environ(), comparison=comparison,
            tools=ask.tools,
        )  # fmt: skip
        self._check_room()
        run, created = start_steps(self.store, plan, idempotency_key=ask.idempotency_key, started_by=ask.started_by)

        def unqueued(run_id: str) -> StepRunView:
            error = "the step replay could not be queued"
            return self.store.finish_step_run(run_id, status="failed", reason="not_attempted", error=error)

        return self._queue_new(ask, run, created and plan.refusal is None, STEP_RUN_TASK, unqueued)

    def _queue_new(self, ask: ReplayAsk, run: R, send: bool, task: str, unqueued: Callable[[str], R]) -> R:
        """Queue the run ``start`` recorded when it is new and may be sent (``send``); the run as it stands.

        KeyConflict when the key named a run of another conversation. A run whose job could not be
        stored is finished by ``unqueued``: it must not show as running forever.
        """
        if run.conversation_id != ask.conversation_id:
            raise KeyConflict("this idempotency key belongs to a run of another conversation")
        if send:
            try:
                self._enqueue(task, run.run_id, ask.provider)
            except Exception:
                log.exception("could not queue %s %s", task, run.run_id)
                return unqueued(run.run_id)
        return run

    def _check_room(self) -> None:
        """ReplayBusy past ``max_pending`` replays queued or running (a suite's queued jobs do not count)."""
        pending = self.pending
        if pending >= self._max_pending:
            raise ReplayBusy(f"{pending} replays are in progress; try again when one finishes")

    def _enqueue(self, task: str, run_id: str, provider: str) -> None:
        args = {"run_id": run_id, "timeout": self.timeout, "rate_limit_wait": self._rate_limit_wait}
        self.queue.enqueue(task, args, provider=provider, lock=f"{task}:{run_id}")

    @property
    def pending(self) -> int:
        """Replays (runs and step runs) accepted and not yet finished, in every process."""
        return self.queue.pending(task=RUN_TASK) + self.queue.pending(task=STEP_RUN_TASK)

    def shutdown(self) -> None:
        """Wait for the jobs in flight (each send bounded by the timeout), then stop this process's workers."""
        if self._owns_queue:
            self.queue.stop(wait=True)


def _check_form(ask: ReplayAsk, msg_id: str | None = None) -> None:
    """What every replay form must carry before anything is built: a well-formed key, a known provider and model
    (``msg_id``: the message or turn it names), each within its length and character rule (``core.fields``)."""
    fields.PROVIDER.check(ask.provider)
    fields.MODEL.check(ask.model)
    if msg_id is not None:
        fields.ID.check(msg_id)
    if not IDEMPOTENCY_KEY.fullmatch(ask.idempotency_key):
        raise MisuseError("the form's idempotency key is missing or malformed; reload the page and try again")
    try:
        known = provider_named(ask.provider)
    except UnknownNameError as exc:
        raise MisuseError(str(exc)) from None
    if not ask.model_as_typed and not known_model(known, ask.model):
        raise UnknownModel(unknown_model_message(known, ask.model))
