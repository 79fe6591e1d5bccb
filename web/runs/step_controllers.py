"""Step replays in the dashboard: start one (POST only), watch it, read it as JSON.

- ``POST /conversations/{id}/step-runs``: CSRF token, same origin and an idempotency key, as a
  Re-run (web.runs.controllers): the same key twice is one run. htmx gets the run's live region;
  a plain form post is redirected (303) to the run's page.
- ``GET /step-runs/{run_id}[?at=k]``: the recorded and replayed steps side by side (``at``: the
  step to open at); for htmx the live region alone (polled while the run goes).
- ``GET /api/step-runs/{run_id}``: the run as ``traceloupe replay --steps --json`` prints it.

Two step runs are compared at ``/runs/compare`` (web.runs.controllers).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, MediaType, get, post
from litestar.exceptions import HTTPException, NotFoundException
from litestar.params import FromQuery, QueryParameter
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Redirect, Template

from core import fields
from core.accounts.roles import Role
from core.errors import MisuseError, UnknownNameError
from core.replay.turns import RecordedStep, turn_of
from core.store import Store
from core.store.step_runs import StepRunView
from web import masking, urls
from web.auth.access import PageController, needs
from web.deps import FORM, ManyCallsFields, RunsDep
from web.runs.starts import STARTER, StarterDep
from web.runs.step_compare import StepComparePage, step_compare_page
from web.runs.step_views import StepRunPanel, step_run_panel

StepAt = Annotated[int | None, QueryParameter(ge=1, le=10_000)]


@dataclass
class StepRunData(ManyCallsFields):
    """The Replay steps form's fields: a replay form's, its turn and its limits (optional, so they come as text)."""

    turn: str = ""
    max_steps: str = ""


def _limits(data: StepRunData) -> tuple[int | None, float | None]:
    """The form's max steps and max cost; MisuseError (said in place) when one is not a number in its range."""
    return fields.MAX_STEPS.parse(data.max_steps), fields.MAX_COST.parse(data.max_cost)


def get_step_run(store: Store, run_id: str) -> StepRunView:
    try:
        return store.get_step_run(run_id)
    except UnknownNameError:
        raise NotFoundException(f"No step run with id {run_id!r}.") from None


def recorded_steps(store: Store, run: StepRunView) -> tuple[RecordedStep, ...] | None:
    """The turn's recorded steps as they are stored now; None when the turn is gone or no longer one."""
    try:
        typed = [m.message for m in store.get_conversation(run.conversation_id).messages]
        return turn_of(typed, run.turn_msg_id).steps
    except (UnknownNameError, MisuseError):
        return None


def step_panel(store: Store, run: StepRunView, at: int | None = None, *, compact: bool = False) -> StepRunPanel:
    return step_run_panel(run, recorded_steps(store, run), at, compact=compact)


def step_compare(store: Store, a: str, b: str) -> StepComparePage | None:
    """Two step runs compared; None when neither id is a step run (a 400 when only one is)."""
    found = []
    for run_id in (a, b):
        with contextlib.suppress(UnknownNameError):
            found.append(store.get_step_run(run_id))
    if not found:
        return None
    if len(found) == 1:
        raise HTTPException(status_code=400, detail="A step run compares with another step run only.")
    return step_compare_page(found[0], found[1])


class StepRunsController(PageController):
    """The step run pages and the one route that starts a step run."""

    @post(
        "/conversations/{conversation_id:str}/step-runs",
        name="step-run-start",
        status_code=200,
        sync_to_thread=True,
        opt=needs(Role.REVIEWER, audited_as="replay.steps"),
        dependencies={"starter": STARTER},
    )
    def start(
        self, conversation_id: urls.PathId, data: Annotated[StepRunData, FORM], starter: StarterDep
    ) -> Template | Redirect:
        """Record a step run and send it off the request thread; answer at once with its live region. The request
        options (``web.request_options``) go over the turn's stored request in every step, checked against the model
        table for the model, and are recorded with the run."""
        conversation_id = urls.from_segment(conversation_id)

        def submit() -> StepRunView:
            max_steps, max_cost = _limits(data)
            return starter.runs.submit_steps(
                starter.ask(conversation_id, data),
                turn=data.turn or None,
                max_steps=max_steps,
                max_cost=max_cost,
                compare=data.compare,
            )

        # Answered with the compact region: it appears on the timeline.
        region = ("runs/_step_run.html", lambda run: step_panel(starter.runs.store, run, compact=True))
        return starter.answer(submit, urls.step_run, region)

    @get("/step-runs/{run_id:str}", name="step-run", sync_to_thread=True)
    def step_run(
        self,
        request: HTMXRequest,
        run_id: urls.PathId,
        run_service: RunsDep,
        at: StepAt = None,
        compact: FromQuery[bool] = False,
    ) -> Template:
        """A step run's page; its live region alone for htmx (the progress poll; ``compact`` on the timeline)."""
        run = get_step_run(run_service.store, urls.from_segment(run_id))
        panel = step_panel(run_service.store, run, at, compact=compact and bool(request.htmx))
        template = "runs/_step_run.html" if request.htmx else "runs/step_run.html"
        return Template(template, context={"panel": panel}, headers={"Vary": "HX-Request"})


class StepRunsApiController(Controller):
    """One step run as JSON: the fields of ``traceloupe replay --steps --json``; never a key."""

    opt = needs(Role.VIEWER)

    path = "/api"
    after_request = staticmethod(masking.mask_response)  # trace text goes out masked, as on the pages
    tags = ["runs"]  # noqa: RUF012 - Litestar reads a class attribute

    @get("/step-runs/{run_id:str}", name="api-step-run", sync_to_thread=True, media_type=MediaType.JSON)
    def one(self, run_id: urls.PathId, run_service: RunsDep) -> dict[str, Any]:
        """One step run: status, where it diverged and why, every step's verdict, calls, text, tokens, cost, latency."""
        return get_step_run(run_service.store, urls.from_segment(run_id)).to_json()
