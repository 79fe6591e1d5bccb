"""Replays for the dashboard: a request records the run, a small bounded thread pool sends it.

The POST handler calls :meth:`RunService.submit`, which builds the body, claims the run
under the form's idempotency key (a unique column: the same key twice, even from two
concurrent requests or two server processes, is one run and one provider call) and hands
the send to the pool; the handler answers at once with the run's live status partial.
:meth:`RunService.submit_steps` does the same for a step replay of one turn.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from core.errors import MisuseError
from core.providers import get_dialect
from core.replay.endpoints import PROVIDER_ENV, availability
from core.replay.run import DEFAULT_TIMEOUT, Prepared, execute, prepare, start
from core.replay.steps import StepPlan, execute_steps, plan_steps, start_steps
from core.store import RunView, Store
from core.store.step_runs import StepRunView
from web.runs.models import known_model, unknown_model_message

log = logging.getLogger("traceloupe.web.runs")

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

    dialect: str
    available: bool
    key_var: str
    default_model: str
    reason: str


class RunService:
    """Starts replays for the dashboard and runs them off the request thread.

    ``workers`` bounds the provider calls in flight; ``max_pending`` bounds the runs
    accepted but not finished (queued included): past it a new run is refused before
    anything is recorded. ``environ`` is read at every send, so a key set or removed
    while the server runs takes effect on the next run.
    """

    def __init__(
        self,
        store: Store,
        *,
        workers: int = 2,
        max_pending: int = 16,
        timeout: float = DEFAULT_TIMEOUT,
        environ: Callable[[], Mapping[str, str]] = lambda: os.environ,
    ) -> None:
        if workers < 1 or max_pending < workers:
            raise ValueError("need workers >= 1 and max_pending >= workers")
        self.store = store
        self.timeout = timeout
        self._environ = environ
        self._max_pending = max_pending
        self._pending = 0
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="replay")

    def choices(self) -> list[ProviderChoice]:
        """Every replayable dialect, with whether its key is set and a default model."""
        return [
            ProviderChoice(a.dialect, a.available, a.key_var, get_dialect(a.dialect).default_model, a.reason)
            for a in availability(self._environ())
        ]

    def submit(
        self,
        conversation_id: str,
        provider: str,
        model: str,
        *,
        upto: str | None,
        idempotency_key: str,
        model_as_typed: bool = False,
    ) -> RunView:
        """Record a run and queue its send; the recorded run when the key was used already.

        ``model_as_typed``: the reader typed the model on purpose, so a name outside the provider's
        families is sent (the run shows a warning) instead of refused.

        Raises (nothing recorded): UnknownNameError, ProviderUnavailable, ReplayBusy, KeyConflict,
        UnknownModel, MisuseError for a malformed key.
        """
        _check_form(provider, model, idempotency_key, model_as_typed)
        prepared = prepare(self.store, conversation_id, provider, model, upto=upto, environ=self._environ())
        self._claim_slot()
        queued = False
        try:
            run, created = start(self.store, prepared, idempotency_key=idempotency_key)
            if run.conversation_id != conversation_id:
                raise KeyConflict("this idempotency key belongs to a run of another conversation")
            if created and prepared.refusal is None:
                self._pool.submit(self._execute, prepared, run.run_id)
                queued = True
            return run
        finally:
            if not queued:
                self._release()

    def submit_steps(
        self,
        conversation_id: str,
        provider: str,
        model: str,
        *,
        turn: str | None,
        idempotency_key: str,
        max_steps: int | None = None,
        max_cost: float | None = None,
        model_as_typed: bool = False,
    ) -> StepRunView:
        """Record a step replay of one turn (the last with a trace when ``turn`` is None) and queue it.

        The same rules as :meth:`submit`: the recorded run when the key was used already, nothing
        recorded when it raises (the same errors, and MisuseError for a turn that cannot be replayed).
        """
        _check_form(provider, model, idempotency_key, model_as_typed)
        plan = plan_steps(
            self.store, conversation_id, provider, model,
            turn=turn, max_steps=max_steps, max_cost=max_cost, environ=self._environ(),
        )  # fmt: skip
        self._claim_slot()
        queued = False
        try:
            run, created = start_steps(self.store, plan, idempotency_key=idempotency_key)
            if run.conversation_id != conversation_id:
                raise KeyConflict("this idempotency key belongs to a run of another conversation")
            if created and plan.refusal is None:
                self._send_steps(plan, run.run_id)
                queued = True
            return run
        finally:
            if not queued:
                self._release()

    def _send_steps(self, plan: StepPlan, run_id: str) -> None:
        """Where a recorded step run is handed off: the pool today, the job queue's step-run task once it exists."""
        self._pool.submit(self._execute_steps, plan, run_id)

    def _execute_steps(self, plan: StepPlan, run_id: str) -> None:
        try:
            execute_steps(self.store, plan, run_id, timeout=self.timeout)
        except Exception:  # the store itself failed: the run stays "running", the log says why
            log.exception("could not record the end of step run %s", run_id)
        finally:
            self._release()

    def _claim_slot(self) -> None:
        with self._lock:
            if self._pending >= self._max_pending:
                raise ReplayBusy(f"{self._pending} replays are in progress; try again when one finishes")
            self._pending += 1

    def _execute(self, prepared: Prepared, run_id: str) -> None:
        try:
            execute(self.store, prepared, run_id, timeout=self.timeout)
        except Exception:  # the store itself failed: the run stays "running", the log says why
            log.exception("could not record the end of run %s", run_id)
        finally:
            self._release()

    def _release(self) -> None:
        with self._lock:
            self._pending -= 1

    @property
    def pending(self) -> int:
        """Runs accepted and not yet finished."""
        with self._lock:
            return self._pending

    def shutdown(self) -> None:
        """Wait for the runs in flight (each bounded by the timeout), then stop the pool."""
        self._pool.shutdown(wait=True)


def _check_form(provider: str, model: str, idempotency_key: str, model_as_typed: bool) -> None:
    """What every replay form must carry before anything is built: a well-formed key, a known provider and model."""
    if not IDEMPOTENCY_KEY.match(idempotency_key):
        raise MisuseError("the form's idempotency key is missing or malformed; reload the page and try again")
    if provider not in PROVIDER_ENV:
        raise MisuseError(f"unknown provider {provider!r}; known: {', '.join(PROVIDER_ENV)}")
    if not model_as_typed and not known_model(provider, model):
        raise UnknownModel(unknown_model_message(provider, model))
