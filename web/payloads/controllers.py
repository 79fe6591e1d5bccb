"""``/conversations/{id}/payload/{provider}``: the request body a provider would receive, and its phases."""

from __future__ import annotations

import json
from typing import Annotated, Any

from litestar import Controller, Request, get
from litestar.di import Provide
from litestar.params import Parameter
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Stream, Template

from web import masking
from web.conversations.pages import conversation_page
from web.deps import HeavyDep, PayloadsDep, RunsDep, SettingsDep, SourceDep
from web.payloads.builder import PayloadBuilder
from web.payloads.pages import PayloadPage, PhasesPanel, PhaseView
from web.payloads.service import (
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
from web.payloads.windows import windowed_from
from web.runs.views import RerunForms
from web.source import StoreSource

WindowNumber = Annotated[int, Parameter(ge=0, le=1_000_000)]
PANE = "payload-json"

MAX_PHASE_CHARS = 200_000


def _pretty(name: str, value: Any) -> PhaseView:
    text = masking.mask(json.dumps(value, indent=2, ensure_ascii=False, default=repr))
    cut = len(text) > MAX_PHASE_CHARS
    return PhaseView(name, text[:MAX_PHASE_CHARS] if cut else text, cut)


class PayloadController(Controller):
    """The payload page and its phases fragment."""

    include_in_schema = False
    path = "/conversations/{conversation_id:str}/payload/{provider:str}"
    dependencies = {"asked": Provide(asked_request, sync_to_thread=False)}  # noqa: RUF012 - Litestar reads it

    @get("/", name="payload")
    async def payload(
        self,
        request: Request[Any, Any, Any],
        source: SourceDep,
        settings: SettingsDep,
        run_service: RunsDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        asked: AskedDep,
        at: MsgId = None,
    ) -> Template:
        """The body pretty-printed and highlighted, the warnings, the preflight verdict and what the model cannot
        carry, the cards beside it (hover links the two); ``at`` (a card's anchor) opens the cards at its page."""
        conversation_id, provider = asked.conversation_id, asked.provider

        def build(_: object) -> PayloadPage:
            digest = payload_digest(source, payloads, asked)
            loaded = source.load(conversation_id)
            choice = asked.choice(loaded, payloads)
            offset = loaded.timeline.page_of(at, settings.page_size) if at else 0
            rerun = RerunForms(conversation_id, run_service.choices())
            cards = conversation_page(loaded, settings, rerun, offset, at=at)
            head = digest.head
            body = None
            if head.plan is not None:
                shown = {card.anchor for card in cards.timeline.cards}
                first_windows = {a: n for a, n in digest.window_map().items() if a in shown}
                first = digest_window(source, payloads, asked, digest, 0)
                body = windowed_from(head.plan, PANE, first, choice.window_url, first_windows)
            return PayloadPage(
                title=masking.mask(loaded.summary.title) or "(no user text)",
                request=choice,
                built=head.facts,
                body=body,
                warnings=list(head.warnings),
                warnings_total=head.warnings_total,
                cards=cards,
                damaged_records=loaded.summary.damaged,
                attachments_root=settings.attachments_root is not None,
            )

        command = asked.command()
        page = await heavy.run(request.receive, build, what=f"the {provider} request", command=command)
        return Template("payloads/payload.html", context={"page": page})

    @get("/window", name="payload-window")
    async def window(
        self,
        request: Request[Any, Any, Any],
        source: SourceDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        n: WindowNumber,
        asked: AskedDep,
    ) -> Template:
        """Window ``n`` of the body, highlighted: the fragment that replaces its placeholder on the page."""
        provider = asked.provider

        def build(_: object) -> dict[str, Any]:
            digest = payload_digest(source, payloads, asked)
            return {"pane": PANE, "n": n, "rendered": digest_window(source, payloads, asked, digest, n)}

        command = asked.command()
        context = await heavy.run(request.receive, build, what=f"the {provider} request", command=command)
        return Template("payloads/_window.html", context=context)

    @get("/windows", name="payload-windows")
    async def windows(
        self,
        request: Request[Any, Any, Any],
        source: SourceDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        asked: AskedDep,
    ) -> dict[str, int]:
        """Every card anchor -> the window holding the first line of its part, for cards the page loaded later."""
        provider = asked.provider

        def build(_: object) -> dict[str, int]:
            return payload_digest(source, payloads, asked).window_map()

        command = asked.command()
        return await heavy.run(request.receive, build, what=f"the {provider} request", command=command)

    @get("/body.json", name="payload-download")
    async def download(
        self,
        request: Request[Any, Any, Any],
        source: SourceDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        asked: AskedDep,
    ) -> Stream:
        """The whole body as the page shows it (pretty, secrets masked), streamed window by window."""
        provider = asked.provider

        def build(_: object) -> BodyView:
            return self._view(source, payloads, asked)

        command = asked.command()
        view = await heavy.run(request.receive, build, what=f"the {provider} request", command=command)
        filename = f"{provider}-request.json"
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
    async def phases(
        self,
        request: HTMXRequest,
        source: SourceDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        asked: AskedDep,
    ) -> Template:
        """Every phase's output (``#payload-phases``); a plain request gets it as a page of its own."""
        provider = asked.provider

        def build(_: object) -> PhasesPanel:
            loaded, built = asked.build(source, payloads)
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
        panel = await heavy.run(request.receive, build, what=f"the {provider} request's phases", command=command)
        template = "payloads/_payload_phases.html" if request.htmx else "payloads/payload_phases.html"
        return Template(template, context={"page": panel}, headers={"Vary": "HX-Request"})
