"""Suites in the dashboard: save the list's matches as a suite, list suites, start a suite run, watch it.

- ``POST /suites``: the list page's "save these N as a suite" (its filters as fields); 303 to the suite.
- ``GET /suites``, ``GET /suites/{name}``: the suites; one suite's conversations, runs and Run form.
- ``POST /suites/{name}/runs``: CSRF token, same origin (web.security) and an idempotency key; the same
  key twice is one suite run. The jobs are queued and the answer (303 to the run's page) is immediate.
- ``GET /suite-runs/{id}``: progress, outcomes (``sort``, ``order``, ``outcome`` in the query) and the
  regressions and fixes against the baseline; for htmx the live region alone, polled while running.
- ``GET /api/suite-runs/{id}``: the report as JSON, as ``traceloupe suite run --json`` prints it.

Nothing that records or queues work answers to GET.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, MediaType, get, post
from litestar.exceptions import ValidationException
from litestar.params import QueryParameter
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Redirect, Template

from core.accounts.roles import Role
from core.suites import OUTCOMES
from web import masking, urls
from web.auth.access import PageController, needs
from web.auth.principals import started_by
from web.deps import FORM, ManyCallsFields
from web.list_query import ListQuery
from web.suites.deps import SUITES_PROVIDER, SuitesDep
from web.suites.pages import (
    ORDERS,
    SORTS,
    RunRow,
    SuitePage,
    SuiteRow,
    SuitesPage,
    members,
    run_form,
    suite_run_page,
)
from web.suites.service import parse_run_request, titles

MAX_RUNS_LISTED = 50
MAX_SEARCH_CHARS = 200
Choice = Annotated[str, QueryParameter(max_length=20)]


@dataclass
class SaveData:
    """The save control's fields: the suite's name and the list's filters (the CSRF token is checked before)."""

    name: str = ""
    q: str = ""
    damaged: str = ""
    runs: str = ""
    kind: str = ""
    sort: str = "recent"


@dataclass
class RunData(ManyCallsFields):
    """The Run form's fields: a replay form's and the run's settings, as text (parsed by ``parse_run_request``)."""

    mode: str = "final"
    concurrency: str = ""
    baseline: str = ""


class SuitesController(PageController):
    """The suite pages and the two routes that record something (a suite, a suite run)."""

    dependencies = {"suites": SUITES_PROVIDER}  # noqa: RUF012 - Litestar reads a class attribute

    @post(
        urls.SUITES,
        name="suite-create",
        status_code=303,
        sync_to_thread=True,
        opt=needs(Role.REVIEWER, audited_as="suite.create"),
    )
    def create(self, suites: SuitesDep, data: Annotated[SaveData, FORM]) -> Redirect:
        """Save what the list's filters match now as a suite, then open it."""
        if len(data.q) > MAX_SEARCH_CHARS:
            raise ValidationException(f"the search is at most {MAX_SEARCH_CHARS} characters, as on the list")
        query = ListQuery(q=data.q, damaged=data.damaged == "1", runs=data.runs == "1", kind=data.kind,
                          sort=data.sort or "recent")  # fmt: skip
        name = suites.create(data.name, query.store_query())
        return Redirect(urls.suite(name), status_code=303)

    @get(urls.SUITES, name="suites", sync_to_thread=True)
    def index(self, suites: SuitesDep) -> Template:
        """Every suite: its size, its filter and how its newest run went."""
        engine = suites.suites
        rows = [
            SuiteRow(s, engine.report(s.last_run_id) if s.last_run_id is not None else None) for s in engine.summaries()
        ]
        return Template("suites/index.html", context={"page": SuitesPage(rows)})

    @get(f"{urls.SUITES}/{{name:str}}", name="suite", sync_to_thread=True)
    def suite(self, name: urls.PathId, suites: SuitesDep) -> Template:
        """A suite's conversations and runs, and the form that starts a run."""
        name = urls.from_segment(name)
        engine = suites.suites
        suite = engine.get(name)
        runs = engine.runs(name)
        rows = [RunRow(r, engine.progress(r.run_id)) for r in runs[:MAX_RUNS_LISTED]]
        found = titles(suites.store, suite.conversations[:200])
        page = SuitePage(suite, members(suite, found), rows, run_form(name, suites.choices(), runs))
        return Template("suites/suite.html", context={"page": page})

    @post(
        f"{urls.SUITES}/{{name:str}}/runs",
        name="suite-run-start",
        status_code=303,
        sync_to_thread=True,
        opt=needs(Role.REVIEWER, audited_as="suite.run"),
    )
    def start(
        self,
        request: HTMXRequest,
        name: urls.PathId,
        suites: SuitesDep,
        data: Annotated[RunData, FORM],
    ) -> Redirect:
        """Record a suite run and queue one job per conversation; open its page at once."""
        name = urls.from_segment(name)
        asked = parse_run_request(
            data.provider, data.model, data.mode, data.concurrency, data.max_cost, data.baseline,
            model_as_typed=data.as_typed, compare=data.compare,
        )  # fmt: skip
        run = suites.start(name, asked, data.idempotency_key, started_by(request))  # KeyConflict: 409 (web.errors)
        return Redirect(urls.suite_run(run.run_id), status_code=303)

    @get("/suite-runs/{run_id:str}", name="suite-run", sync_to_thread=True)
    def run(
        self,
        request: HTMXRequest,
        run_id: urls.PathId,
        suites: SuitesDep,
        sort: Choice = "position",
        order: Choice = "asc",
        outcome: Choice = "",
    ) -> Template:
        """A suite run's page; its live region alone for htmx (the progress poll)."""
        if sort not in SORTS:
            raise ValidationException(f"unknown sort {sort!r}; known: {', '.join(SORTS)}")
        if order not in ORDERS:
            raise ValidationException(f"unknown order {order!r}; known: {', '.join(ORDERS)}")
        if outcome and outcome not in OUTCOMES:
            raise ValidationException(f"unknown outcome {outcome!r}; known: {', '.join(OUTCOMES)}")
        run_id = urls.from_segment(run_id)
        engine = suites.suites
        report = engine.report(run_id)
        progress = engine.progress(run_id)
        found = titles(suites.store, [i.conversation_id for i in report.run.items])
        page = suite_run_page(report, progress, found, sort=sort, order=order, outcome=outcome)
        template = "suites/_live.html" if request.htmx else "suites/run.html"
        return Template(template, context={"page": page}, headers={"Vary": "HX-Request"})


class SuiteRunsApiController(Controller):
    """A suite run's report as JSON: outcomes, totals, regressions and fixes; never a key."""

    opt = needs(Role.VIEWER)

    path = "/api"
    after_request = staticmethod(masking.mask_response)  # provider errors can quote trace text
    tags = ["suites"]  # noqa: RUF012 - Litestar reads a class attribute
    dependencies = {"suites": SUITES_PROVIDER}  # noqa: RUF012 - Litestar reads a class attribute

    @get("/suite-runs/{run_id:str}", name="api-suite-run", sync_to_thread=True, media_type=MediaType.JSON)
    def one(self, run_id: urls.PathId, suites: SuitesDep) -> dict[str, Any]:
        """One suite run: each conversation's outcome, the totals, the progress and the changes against its baseline."""
        run_id = urls.from_segment(run_id)
        report = suites.suites.report(run_id)
        progress = suites.suites.progress(run_id)
        body = report.to_json()
        body["progress"] = {
            "total": progress.total, "done": progress.done, "failed": progress.counts.get("failed", 0),
            "remaining": progress.remaining, "cost_usd": progress.cost_usd,
        }  # fmt: skip
        return body
