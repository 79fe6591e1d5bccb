"""``/conversations/{id}/payload/{provider}``: the request body a provider would receive, and its phases."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from litestar import get
from litestar.di import Provide
from litestar.params import FromQuery, Parameter, QueryParameter
from litestar.plugins.htmx import ClientRefresh, HTMXRequest
from litestar.response import Redirect, Stream, Template

from web import masking, urls
from web.auth.access import PageController
from web.bodies.builder import PayloadBuilder
from web.bodies.page_responses import page_response, preparing_response
from web.bodies.preparing import PreparingPage, payload_preparing, preparing_page
from web.bodies.recorded import RecordedPanel, recorded_for, recorded_panel
from web.bodies.requests import (
    AskedDep,
    AskedRequest,
    BodyView,
    MsgId,
    asked_request,
    body_chunks,
    body_view,
    digest_window,
    payload_digest,
)
from web.bodies.windows import pending_after, windowed_from
from web.conversation_page import conversation_page
from web.deps import RunsDep, SettingsDep, WorkDep
from web.payloads.pages import PayloadPage, PhasesPanel, PhaseView
from web.replays.forms import RerunForms
from web.source import StoreSource

WindowNumber = Annotated[int, Parameter(ge=0, le=1_000_000)]
PANE = "payload-json"
PANEL = "payload-panel"
"""The panel the request options form swaps (htmx)."""

MAX_PHASE_CHARS = 200_000


def _preparing_url(asked: AskedRequest) -> str:
    return urls.payload_preparing(
        asked.conversation_id, asked.provider, upto=asked.upto, repair=asked.repair, model=asked.model
    )


def _page_url(asked: AskedRequest) -> str:
    return urls.payload(asked.conversation_id, asked.provider, upto=asked.upto, repair=asked.repair, model=asked.model)


def _window_url(asked: AskedRequest) -> Callable[[int], str]:
    return lambda n: urls.payload_window(
        asked.conversation_id, asked.provider, n, upto=asked.upto, repair=asked.repair, model=asked.model
    )


def _pretty(name: str, value: Any) -> PhaseView:
    text = masking.mask(json.dumps(value, indent=2, ensure_ascii=False, default=repr))
    cut = len(text) > MAX_PHASE_CHARS
    return PhaseView(name, text[:MAX_PHASE_CHARS] if cut else text, cut)


class PayloadController(PageController):
    """The payload page and its phases fragment."""

    path = "/conversations/{conversation_id:str}/payload/{provider:str}"
    dependencies = {"asked": Provide(asked_request, sync_to_thread=False)}  # noqa: RUF012 - Litestar reads it

    @get("/", name="payload")
    async def payload(
        self,
        request: HTMXRequest,
        work: WorkDep,
        settings: SettingsDep,
        run_service: RunsDep,
        asked: AskedDep,
        at: MsgId = None,
    ) -> Template:
        """The body pretty-printed and highlighted, the warnings, the preflight verdict and what the model cannot
        carry, the cards beside it (hover links the two); ``at`` (a card's anchor) opens the cards at its page.
        A long trace whose digest is not made yet gets the panel that shows how far it is (``web.bodies.preparing``).
        The request options (``web.request_options``) rebuild the body; htmx aimed at the panel gets the panel.
        """
        conversation_id = asked.conversation_id
        source, payloads = work.source, work.payloads

        def build(_: object) -> PayloadPage | PreparingPage:
            progress = payload_preparing(source, payloads, asked)
            if progress is not None:
                return preparing_page(source, conversation_id, asked.what, _preparing_url(asked), progress)
            digest = payload_digest(source, payloads, asked)
            loaded = source.load(conversation_id)
            choice = asked.choice(loaded, payloads, digest.choices())
            offset = loaded.timeline.page_of(at, settings.page_size) if at else 0
            rerun = RerunForms(conversation_id, run_service.choices())
            cards = conversation_page(loaded, settings, rerun, offset, at=at)
            head = digest.head
            body = None
            if head.plan is not None:
                first_windows = digest.window_map(card.anchor for card in cards.timeline.cards)
                first = digest_window(source, payloads, asked, digest, 0)
                body = windowed_from(head.plan, PANE, first, choice.window_url, first_windows)
            recorded = recorded_for(loaded, asked.upto)
            panel: RecordedPanel | None = None
            if recorded is not None and recorded.provider == asked.provider:
                _, built = asked.build(source, payloads)
                if built.result is not None:
                    panel = recorded_panel(recorded, built.result.body)
            return PayloadPage(
                title=masking.mask(loaded.summary.title) or "(no user text)",
                request=choice,
                recorded=panel,
                recorded_provider=recorded.provider if recorded is not None and panel is None else None,
                built=head.facts,
                body=body,
                warnings=list(head.warnings),
                warnings_total=head.warnings_total,
                cards=cards,
                damaged_records=loaded.summary.damaged,
                attachments_root=settings.attachments_root is not None,
                options=asked.options_form(loaded),
            )

        page = await work.run(build, what=asked.what, command=asked.command())
        return page_response(request, page, PANEL, "payloads/_payload_panel.html", "payloads/payload.html")

    @get("/preparing", name="payload-preparing")
    async def preparing(
        self, request: HTMXRequest, work: WorkDep, asked: AskedDep
    ) -> Template | ClientRefresh | Redirect:
        """How far the page's digest is made (``#digest-preparing``, polled); once it is, a refresh into the page."""
        poll_url, command = _preparing_url(asked), asked.command()
        return await preparing_response(request, work, asked, payload_preparing, poll_url, _page_url(asked), command)

    @get("/window", name="payload-window")
    async def window(
        self,
        work: WorkDep,
        n: WindowNumber,
        asked: AskedDep,
        then: FromQuery[bool] = False,
        until: Annotated[int | None, QueryParameter(ge=0, le=10_000_000)] = None,
    ) -> Template:
        """Window ``n`` of the body, highlighted: the fragment that replaces its placeholder on the page; ``then``,
        followed by the placeholders of the next windows before ``until`` (``web.bodies.windows.pending_after``)."""

        def build(_: object) -> dict[str, Any]:
            digest = payload_digest(work.source, work.payloads, asked)
            rendered = digest_window(work.source, work.payloads, asked, digest, n)
            plan = digest.head.plan
            pending = pending_after(plan, PANE, _window_url(asked), n, until) if then and plan is not None else []
            return {"pane": PANE, "n": n, "rendered": rendered, "pending": pending}

        context = await work.run(build, what=asked.what, command=asked.command())
        return Template("payloads/_window.html", context=context)

    @get("/windows", name="payload-windows")
    async def windows(self, work: WorkDep, asked: AskedDep) -> dict[str, int]:
        """Every card anchor -> the window holding the first line of its part, for cards the page loaded later."""

        def build(_: object) -> dict[str, int]:
            return payload_digest(work.source, work.payloads, asked).window_map()

        return await work.run(build, what=asked.what, command=asked.command())

    @get("/body.json", name="payload-download")
    async def download(self, work: WorkDep, asked: AskedDep) -> Stream:
        """The whole body as the page shows it (pretty, secrets masked), streamed window by window."""

        def build(_: object) -> BodyView:
            return self._view(work.source, work.payloads, asked)

        view = await work.run(build, what=asked.what, command=asked.command())
        filename = f"{asked.provider}-request.json"
        return Stream(
            body_chunks(view.layout, view.marks),
            media_type="application/json; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )

    @staticmethod
    def _view(source: StoreSource, payloads: PayloadBuilder, asked: AskedRequest) -> BodyView:
        _, built = asked.build(source, payloads)
        return body_view(payloads, built)

    @get("/phases", name="payload-phases")
    async def phases(self, request: HTMXRequest, work: WorkDep, asked: AskedDep) -> Template:
        """Every phase's output (``#payload-phases``); a plain request gets it as a page of its own."""

        def build(_: object) -> PhasesPanel:
            loaded, built = asked.build(work.source, work.payloads)
            phases: list[PhaseView] = []
            provenance = PhaseView("provenance", "", False)
            if built.result is not None:
                phases = [_pretty(name, value) for name, value in built.result.phases.items()]
                phases.append(_pretty("warnings", built.result.warnings_json()))
                provenance = _pretty("provenance", built.result.provenance)
            return PhasesPanel(
                title=masking.mask(loaded.summary.title) or "(no user text)",
                request=asked.choice(loaded),
                built=built,
                phases=phases,
                provenance=provenance,
            )

        command = asked.command(phases=True)
        panel = await work.run(build, what=f"{asked.what}'s phases", command=command)
        template = "payloads/_payload_phases.html" if request.htmx else "payloads/payload_phases.html"
        return Template(template, context={"page": panel}, headers={"Vary": "HX-Request"})
