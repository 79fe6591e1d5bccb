"""``/conversations/{id}/payload/{provider}``: the request body a provider would receive, and its phases."""

from __future__ import annotations

import json
from typing import Annotated, Any

from litestar import Controller, Request, get
from litestar.params import FromQuery, Parameter
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Stream, Template

from web import masking, urls
from web.conversations.pages import conversation_page
from web.deps import HeavyDep, PayloadsDep, RunsDep, SettingsDep, SourceDep
from web.payloads.builder import PayloadBuilder
from web.payloads.pages import MAX_WARNINGS, PayloadPage, PhasesPanel, PhaseView, WarningView
from web.payloads.service import (
    BodyView,
    ModelName,
    MsgId,
    body_chunks,
    body_view,
    load_and_build,
    payload_command,
    request_choice,
    window_of,
)
from web.payloads.windows import windowed
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

    @get("/", name="payload")
    async def payload(
        self,
        request: Request[Any, Any, Any],
        conversation_id: urls.PathId,
        provider: urls.PathId,
        source: SourceDep,
        settings: SettingsDep,
        run_service: RunsDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        upto: MsgId = None,
        repair: FromQuery[bool] = False,
        model: ModelName = None,
        at: MsgId = None,
    ) -> Template:
        """The body pretty-printed and highlighted, the warnings, the preflight verdict and what the model cannot
        carry, the cards beside it (hover links the two); ``at`` (a card's anchor) opens the cards at its page."""
        conversation_id, provider = urls.from_segment(conversation_id), urls.from_segment(provider)

        def build(_: object) -> PayloadPage:
            loaded, built = load_and_build(source, payloads, conversation_id, provider, upto, repair, model)
            choice = request_choice(loaded, provider, upto, repair, model, payloads)
            offset = loaded.timeline.page_of(at, settings.page_size) if at else 0
            rerun = RerunForms(conversation_id, run_service.choices())
            cards = conversation_page(loaded, settings, rerun, offset, at=at)
            body = None
            if built.result is not None:
                view = body_view(payloads, built)
                shown = {card.anchor for card in cards.timeline.cards}
                first_windows = view.layout.windows_of({p: a for p, a in view.anchors.items() if a in shown})
                body = windowed(view.layout, PANE, view.marks, choice.window_url, first_windows)
            return PayloadPage(
                title=masking.mask(loaded.summary.title) or "(no user text)",
                request=choice,
                built=built,
                body=body,
                warnings=[WarningView.of(w) for w in built.result.warnings[:MAX_WARNINGS]] if built.result else [],
                warnings_total=len(built.result.warnings) if built.result else 0,
                cards=cards,
                damaged_records=loaded.summary.damaged,
                attachments_root=settings.attachments_root is not None,
            )

        command = payload_command(conversation_id, provider, upto, model=model)
        page = await heavy.run(request.receive, build, what=f"the {provider} request", command=command)
        return Template("payloads/payload.html", context={"page": page})

    @get("/window", name="payload-window")
    async def window(
        self,
        request: Request[Any, Any, Any],
        conversation_id: urls.PathId,
        provider: urls.PathId,
        source: SourceDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        n: WindowNumber,
        upto: MsgId = None,
        repair: FromQuery[bool] = False,
        model: ModelName = None,
    ) -> Template:
        """Window ``n`` of the body, highlighted: the fragment that replaces its placeholder on the page."""
        conversation_id, provider = urls.from_segment(conversation_id), urls.from_segment(provider)

        def build(_: object) -> dict[str, Any]:
            view = self._view(source, payloads, conversation_id, provider, upto, repair, model)
            return {"pane": PANE, "n": n, "rendered": view.layout.render(window_of(view.layout, n), view.marks)}

        command = payload_command(conversation_id, provider, upto, model=model)
        context = await heavy.run(request.receive, build, what=f"the {provider} request", command=command)
        return Template("payloads/_window.html", context=context)

    @get("/windows", name="payload-windows")
    async def windows(
        self,
        request: Request[Any, Any, Any],
        conversation_id: urls.PathId,
        provider: urls.PathId,
        source: SourceDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        upto: MsgId = None,
        repair: FromQuery[bool] = False,
        model: ModelName = None,
    ) -> dict[str, int]:
        """Every card anchor -> the window holding the first line of its part, for cards the page loaded later."""
        conversation_id, provider = urls.from_segment(conversation_id), urls.from_segment(provider)

        def build(_: object) -> dict[str, int]:
            view = self._view(source, payloads, conversation_id, provider, upto, repair, model)
            return view.layout.windows_of(view.anchors)

        command = payload_command(conversation_id, provider, upto, model=model)
        return await heavy.run(request.receive, build, what=f"the {provider} request", command=command)

    @get("/body.json", name="payload-download")
    async def download(
        self,
        request: Request[Any, Any, Any],
        conversation_id: urls.PathId,
        provider: urls.PathId,
        source: SourceDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        upto: MsgId = None,
        repair: FromQuery[bool] = False,
        model: ModelName = None,
    ) -> Stream:
        """The whole body as the page shows it (pretty, secrets masked), streamed window by window."""
        conversation_id, provider = urls.from_segment(conversation_id), urls.from_segment(provider)

        def build(_: object) -> BodyView:
            return self._view(source, payloads, conversation_id, provider, upto, repair, model)

        command = payload_command(conversation_id, provider, upto, model=model)
        view = await heavy.run(request.receive, build, what=f"the {provider} request", command=command)
        filename = f"{provider}-request.json"
        return Stream(
            body_chunks(view.layout, view.marks),
            media_type="application/json; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )

    @staticmethod
    def _view(
        source: StoreSource,
        payloads: PayloadBuilder,
        conversation_id: str,
        provider: str,
        upto: str | None,
        repair: bool,
        model: str | None,
    ) -> BodyView:
        _, built = load_and_build(source, payloads, conversation_id, provider, upto, repair, model)
        return body_view(payloads, built)

    @get("/phases", name="payload-phases")
    async def phases(
        self,
        request: HTMXRequest,
        conversation_id: urls.PathId,
        provider: urls.PathId,
        source: SourceDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        upto: MsgId = None,
        repair: FromQuery[bool] = False,
        model: ModelName = None,
    ) -> Template:
        """Every phase's output (``#payload-phases``); a plain request gets it as a page of its own."""
        conversation_id, provider = urls.from_segment(conversation_id), urls.from_segment(provider)

        def build(_: object) -> PhasesPanel:
            loaded, built = load_and_build(source, payloads, conversation_id, provider, upto, repair, model)
            phases: list[PhaseView] = []
            provenance = PhaseView("provenance", "", False)
            if built.result is not None:
                phases = [_pretty(name, value) for name, value in built.result.phases.items()]
                phases.append(_pretty("warnings", built.result.warnings_json()))
                provenance = _pretty("provenance", built.result.provenance)
            return PhasesPanel(
                title=masking.mask(loaded.summary.title) or "(no user text)",
                request=request_choice(loaded, provider, upto, repair, model),
                built=built,
                phases=phases,
                provenance=provenance,
            )

        command = payload_command(conversation_id, provider, upto, phases=True, model=model)
        panel = await heavy.run(request.receive, build, what=f"the {provider} request's phases", command=command)
        template = "payloads/_payload_phases.html" if request.htmx else "payloads/payload_phases.html"
        return Template(template, context={"page": panel}, headers={"Vary": "HX-Request"})
