"""``/conversations/{id}/diff?left=P&right=Q``: two providers' bodies side by side, changes grouped by cause.

The page sends the summary (every cause counted, the first changes of each listed) and the first window of
each body; ``/diff/window`` sends a later window of one side, ``/diff/changes`` the next changes of a cause.
The diff is computed on the JSON values once per pair of builds; only the windows asked for are highlighted.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

from litestar import get
from litestar.di import Provide
from litestar.exceptions import NotFoundException
from litestar.params import FromQuery, Parameter, QueryParameter
from litestar.plugins.htmx import ClientRefresh, HTMXRequest
from litestar.response import Redirect, Template

from web import masking, urls
from web.auth.access import PageController
from web.bodies.asked import DiffLinks
from web.bodies.builder import PayloadBuilder
from web.bodies.compare import Listing
from web.bodies.diffs import (
    AskedDiffDep,
    asked_command,
    asked_diff,
    diff_digest,
    diff_listing,
    diff_options_form,
    diff_window,
    side_of,
)
from web.bodies.page_responses import page_response, preparing_response
from web.bodies.preparing import PreparingPage, diff_preparing, preparing_page
from web.bodies.requests import request_choice
from web.bodies.windows import Spans, WindowedBody, pending_after, windowed_from
from web.deps import WorkDep
from web.diff.pages import ChangesPage, DiffPage
from web.source import StoreSource

Provider = Annotated[str, QueryParameter(max_length=40)]
Cause = Annotated[str, QueryParameter(max_length=40)]
Count = Annotated[int, Parameter(ge=0, le=10_000_000)]
PANEL = "diff-panel"
"""The panel the request options form swaps (htmx): the causes and both bodies."""


class DiffController(PageController):
    """The diff page, its windows and its listings."""

    path = "/conversations/{conversation_id:str}/diff"
    dependencies = {"links": Provide(asked_diff, sync_to_thread=False)}  # noqa: RUF012 - Litestar reads it

    @get("/", name="diff")
    async def diff(self, request: HTMXRequest, work: WorkDep, links: AskedDiffDep) -> Template:
        """Both bodies highlighted by windows, each change marked in both panes and listed under its cause; a long
        trace whose digest is not made yet gets the panel that shows how far it is (``web.bodies.preparing``).
        The request options (``web.request_options``) rebuild both bodies; htmx aimed at the panel gets the panel."""
        source, payloads = work.source, work.payloads

        def build(_: object) -> DiffPage | PreparingPage:
            progress = diff_preparing(source, payloads, links)
            if progress is not None:
                return preparing_page(source, links.conversation_id, links.what, _preparing_url(links), progress)
            digest = diff_digest(source, payloads, links)
            loaded = source.load(links.conversation_id)
            head = digest.head
            lbody = rbody = None
            listings = digest.first_listings()

            def pane(side: str, plan: Spans) -> WindowedBody:
                """One side's body: window 0, and placeholders for the next windows and those of listed changes."""
                first = diff_window(source, payloads, links, digest, side, 0)
                also = _listed_windows(listings, f"diff-{side}")
                return windowed_from(plan, f"diff-{side}", first, lambda n: links.window_url(side, n), also=also)

            if head.left_plan is not None and head.right_plan is not None:
                lbody, rbody = pane("left", head.left_plan), pane("right", head.right_plan)
            choice = request_choice(
                loaded, links.left, links.upto, links.repair, payloads=payloads, listed=digest.choices()
            )
            return DiffPage(
                title=masking.mask(loaded.summary.title) or "(no user text)",
                request=replace(choice, options=links.options.texts),
                left=head.left,
                right=head.right,
                changes_total=head.changes_total,
                left_body=lbody,
                right_body=rbody,
                listings=listings if lbody is not None else [],
                links=links,
                options=diff_options_form(links, loaded),
            )

        page = await work.run(build, what=links.what, command=asked_command(links, work.payloads))
        return page_response(request, page, PANEL, "diff/_diff_panel.html", "diff/diff.html")

    @get("/preparing", name="diff-preparing")
    async def preparing(
        self, request: HTMXRequest, work: WorkDep, links: AskedDiffDep
    ) -> Template | ClientRefresh | Redirect:
        """How far the page's digest is made (``#digest-preparing``, polled); once it is, a refresh into the page."""
        poll_url, command = _preparing_url(links), asked_command(links, work.payloads)
        return await preparing_response(request, work, links, diff_preparing, poll_url, links.diff_url, command)

    @get("/window", name="diff-window")
    async def window(
        self,
        work: WorkDep,
        links: AskedDiffDep,
        side: Annotated[str, QueryParameter(max_length=8)],
        n: Count,
        then: FromQuery[bool] = False,
        until: Annotated[int | None, QueryParameter(ge=0, le=10_000_000)] = None,
    ) -> Template:
        """Window ``n`` of one side's body, its changes marked: the fragment that replaces its placeholder; ``then``,
        followed by the placeholders of the next windows before ``until`` (``web.bodies.windows.pending_after``)."""
        side = side_of(side)
        source, payloads = work.source, work.payloads

        def build(_: object) -> dict[str, Any]:
            digest = diff_digest(source, payloads, links)
            rendered = diff_window(source, payloads, links, digest, side, n)
            plan, pane = digest.head.plan(side), f"diff-{side}"
            pending = []
            if then and plan is not None:
                pending = pending_after(plan, pane, lambda k: links.window_url(side, k), n, until)
            return {"pane": pane, "n": n, "rendered": rendered, "pending": pending}

        context = await work.run(build, what=links.what, command=asked_command(links, work.payloads))
        return Template("payloads/_window.html", context=context)

    @get("/changes", name="diff-changes")
    async def changes(
        self, request: HTMXRequest, work: WorkDep, links: AskedDiffDep, cause: Cause, offset: Count = 0
    ) -> Template:
        """The changes of ``cause`` from ``offset`` (list items for htmx; a page of its own otherwise)."""

        def build(_: object) -> ChangesPage:
            return _changes(work.source, work.payloads, links, cause, offset)

        page = await work.run(build, what=links.what, command=asked_command(links, work.payloads))
        template = "diff/_changes.html" if request.htmx else "diff/changes.html"
        return Template(template, context={"page": page}, headers={"Vary": "HX-Request"})


def _listed_windows(listings: list[Listing], pane: str) -> list[int]:
    """The windows of ``pane`` that hold the listed changes (their placeholders go on the page, for a click)."""
    prefix = f"{pane}-w"
    return [
        int(element[len(prefix) :])
        for listing in listings
        for change in listing.changes
        for element in change.windows.split()
        if element.startswith(prefix)
    ]


def _preparing_url(links: DiffLinks) -> str:
    return urls.diff_preparing(links.conversation_id, links.left, links.right, upto=links.upto, repair=links.repair)


def _changes(source: StoreSource, payloads: PayloadBuilder, links: DiffLinks, cause: str, offset: int) -> ChangesPage:
    digest = diff_digest(source, payloads, links)
    listed = diff_listing(source, payloads, links, digest, cause, offset)
    if listed is None:
        raise NotFoundException(f"No change has the cause {cause!r}.")
    return ChangesPage(masking.mask(source.summary(links.conversation_id).title) or "(no user text)", links, listed)
