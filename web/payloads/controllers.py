"""``/conversations/{id}/payload/{provider}``: the request body a provider would receive, and its phases."""

from __future__ import annotations

import json
from typing import Any

from litestar import Controller, Request, get
from litestar.params import FromQuery
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template

from web import masking, urls
from web.conversations.pages import conversation_page
from web.deps import HeavyDep, PayloadsDep, RunsDep, SettingsDep, SourceDep
from web.payloads.jsonview import Mark, render
from web.payloads.pages import PayloadPage, PhasesPanel, PhaseView, WarningView
from web.payloads.service import ModelName, MsgId, load_and_build, payload_command, request_choice
from web.runs.views import RerunForms

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
    ) -> Template:
        """The body pretty-printed and highlighted, the warnings, the preflight verdict and what the model cannot
        carry, the cards beside it (hover links the two)."""
        conversation_id, provider = urls.from_segment(conversation_id), urls.from_segment(provider)

        def build(_: object) -> PayloadPage:
            loaded, built = load_and_build(source, payloads, conversation_id, provider, upto, repair, model)
            rendered = None
            if built.result is not None:
                rendered = render(built.result.body, {p: Mark(card=a) for p, a in built.anchors.items()})
            return PayloadPage(
                title=masking.mask(loaded.summary.title) or "(no user text)",
                request=request_choice(loaded, provider, upto, repair, model),
                built=built,
                rendered=rendered,
                warnings=[WarningView.of(w) for w in built.result.warnings] if built.result else [],
                cards=conversation_page(loaded, settings, RerunForms(conversation_id, run_service.choices())),
                damaged_records=loaded.summary.damaged,
                attachments_root=settings.attachments_root is not None,
            )

        command = payload_command(conversation_id, provider, upto, model=model)
        page = await heavy.run(request.receive, build, what=f"the {provider} request", command=command)
        return Template("payloads/payload.html", context={"page": page})

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
