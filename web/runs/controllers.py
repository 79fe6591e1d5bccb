"""Replays in the dashboard: start one (POST only), watch it, list a conversation's runs, compare two.

- ``POST /conversations/{id}/runs``: CSRF token, same origin (web.security) and an idempotency
  key from the form; the same key twice is the same run and one provider call. GET on it is
  405: nothing that starts a run answers to GET. An htmx request gets the run's live region;
  a plain form post is redirected (303) to the run's page.
- ``GET /runs/{run_id}``: the run's page, or for htmx its live region (polled while running).
- ``GET /conversations/{id}/replays``: the runs of a conversation and the compare form.
- ``GET /runs/compare?a=&b=``: two runs' replies side by side with their diff (two step runs: step by step);
  the diff of two reply runs' request bodies (the whole history, for a long trace) is
  ``GET /runs/compare/requests?a=&b=``, which the page loads.
- ``GET /api/conversations/{id}/runs``, ``GET /api/runs/{run_id}``: the same as JSON.

The key is never part of any of these: the service reads it from the environment at send time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from litestar import Controller, MediaType, get, post
from litestar.exceptions import NotFoundException
from litestar.params import QueryParameter
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Redirect, Template

from core.accounts.roles import Role
from core.errors import UnknownNameError
from core.replay.run import reply_message
from core.store import RunSummary, RunView, Store
from web import masking, urls
from web.auth.access import PageController, needs
from web.deps import FORM, ReplayFields, RunsDep, SourceDep, WorkDep
from web.heavy import shell_command
from web.replays.forms import rerun_form
from web.runs.starts import STARTER, StarterDep
from web.runs.step_compare import StepComparePage
from web.runs.step_controllers import step_compare
from web.runs.step_views import step_run_panel
from web.runs.views import (
    ComparePage,
    ReplaysPage,
    RequestDiff,
    RunPanel,
    compare_page,
    request_diff,
    run_panel,
)
from web.source import StoreSource
from web.timeline import msg_anchor

MAX_LISTED = 200
RunParam = Annotated[str, QueryParameter(max_length=64)]
"""A run id in a compare URL (``a``, ``b``)."""
# The command line has no compare; it prints both runs in full, requests and replies included.
COMPARE_COMMAND = shell_command("traceloupe", "runs", "--json")


@dataclass
class RerunData(ReplayFields):
    """The Re-run form's fields: a replay form's and the message it regenerates."""

    upto: str = ""


def _panel(source: StoreSource, run: RunView) -> RunPanel:
    """A run's panel, its original reply read from the stored conversation and linked into its timeline."""
    reply = reply_message(run)
    if run.up_to_msg_id is None or run.status == "running":
        return run_panel(run, None, reply)
    try:
        loaded = source.load(run.conversation_id)
    except UnknownNameError:
        return run_panel(run, None, reply)
    # Found by its card, so only that record is typed, not the whole trace.
    timeline = loaded.timeline
    position = timeline.position(msg_anchor(run.up_to_msg_id))
    original = timeline.message(position) if position is not None else None
    return run_panel(run, original, reply, timeline)


def _get_run(store: Store, run_id: str) -> RunView:
    try:
        return store.get_run(run_id)
    except UnknownNameError:
        raise NotFoundException(f"No run with id {run_id!r}.") from None


def _get_summary(store: Store, run_id: str) -> RunSummary:
    try:
        return store.get_run_summary(run_id)
    except UnknownNameError:
        raise NotFoundException(f"No run with id {run_id!r}.") from None


class RunsController(PageController):
    """Replay pages and the one route that starts a run."""

    @post(
        "/conversations/{conversation_id:str}/runs",
        name="run-start",
        status_code=200,
        opt=needs(Role.REVIEWER, audited_as="replay.start"),
        sync_to_thread=True,
        dependencies={"starter": STARTER},
    )
    def start(
        self, conversation_id: urls.PathId, data: Annotated[RerunData, FORM], starter: StarterDep
    ) -> Template | Redirect:
        """Record a run and send it off the request thread; answer at once with its live status. The request
        options (``web.request_options``) go over the recorded request, checked against the model's limits."""
        conversation_id = urls.from_segment(conversation_id)

        def submit() -> RunView:
            return starter.runs.submit(starter.ask(conversation_id, data), upto=data.upto or None)

        return starter.answer(submit, urls.run, ("runs/_run.html", lambda run: _panel(starter.source, run)))

    @get("/runs/{run_id:str}", name="run", sync_to_thread=True)
    def run(self, request: HTMXRequest, run_id: urls.PathId, run_service: RunsDep, source: SourceDep) -> Template:
        """A run's page; its live region alone for htmx (the status poll)."""
        run_id = urls.from_segment(run_id)
        run = _get_run(run_service.store, run_id)
        panel = _panel(source, run)
        template = "runs/_run.html" if request.htmx else "runs/run.html"
        return Template(template, context={"panel": panel}, headers={"Vary": "HX-Request"})

    @get("/conversations/{conversation_id:str}/replays", name="replays", sync_to_thread=True)
    def replays(self, conversation_id: urls.PathId, run_service: RunsDep, source: SourceDep) -> Template:
        """Every run and step run of a conversation (newest first), the compare forms and a Re-run form."""
        conversation_id = urls.from_segment(conversation_id)
        source.summary(conversation_id)  # 404 for an unknown conversation; its messages are not read
        listed = run_service.store.list_run_summaries(conversation_id, limit=MAX_LISTED)
        stepped = run_service.store.list_step_runs(conversation_id=conversation_id, limit=MAX_LISTED)
        form = rerun_form(run_service.choices(), conversation_id)
        shown = [masking.mask_value(run) for run in listed]  # errors can quote trace text
        steps = [step_run_panel(run, None) for run in stepped]  # the panel masks the error
        page = ReplaysPage(conversation_id, shown, form, steps)
        return Template("runs/replays.html", context={"page": page})

    @get("/runs/compare", name="runs-compare")
    async def compare(self, work: WorkDep, run_service: RunsDep, a: RunParam, b: RunParam) -> Template:
        """Two runs' replies side by side and their diff (the request bodies' diff is loaded apart); two step
        runs step by step."""

        def build(_: object) -> ComparePage | StepComparePage:
            steps = step_compare(run_service.store, a, b)
            if steps is not None:
                return steps
            left, right = _get_summary(run_service.store, a), _get_summary(run_service.store, b)
            return compare_page(left, right, reply_message(left), reply_message(right))

        page = await work.run(build, what="the comparison of the two runs", command=COMPARE_COMMAND)
        template = "runs/step_compare.html" if isinstance(page, StepComparePage) else "runs/compare.html"
        return Template(template, context={"page": page})

    @get(urls.RUNS_COMPARE_REQUESTS, name="runs-compare-requests")
    async def compare_requests(
        self, request: HTMXRequest, work: WorkDep, run_service: RunsDep, a: RunParam, b: RunParam
    ) -> Template:
        """How two runs' request bodies differ: the compare page's deferred part (a page of its own without htmx)."""

        def build(_: object) -> RequestDiff:
            return request_diff(_get_run(run_service.store, a), _get_run(run_service.store, b))

        diff = await work.run(build, what="the diff of the two request bodies", command=COMPARE_COMMAND)
        template = "runs/_request_diff.html" if request.htmx else "runs/request_diff.html"
        return Template(template, context={"diff": diff}, headers={"Vary": "HX-Request"})


class RunsApiController(Controller):
    """One run as JSON: what was sent, what came back, the parsed reply; never a key.

    Lists of runs are ``/api/runs`` and ``/api/conversations/{id}/runs`` (web/controllers/api_runs.py).
    """

    opt = needs(Role.VIEWER)

    path = "/api"
    after_request = staticmethod(masking.mask_response)  # trace text goes out masked, as on the pages
    tags = ["runs"]  # noqa: RUF012 - Litestar reads a class attribute

    @get("/runs/{run_id:str}", name="api-run", sync_to_thread=True, media_type=MediaType.JSON)
    def one(self, run_id: urls.PathId, run_service: RunsDep) -> RunView:
        """One run: request and response bodies, status, error, timings, usage, the parsed reply."""
        run_id = urls.from_segment(run_id)
        return _get_run(run_service.store, run_id)
