"""``/conversations/{id}/payload/{provider}``: the request body a provider would receive, and its phases."""

from __future__ import annotations

import json
from typing import Annotated, Any

from litestar import Controller, Request, get
from litestar.params import FromPath, FromQuery, QueryParameter
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Template

from web.controllers.conversations import conversation_page
from web.deps import HeavyDep, PayloadsDep, SettingsDep, SourceDep
from web.heavy import export_then
from web.jsonview import Mark, render
from web.pages import PayloadPage, PhasesPanel, PhaseView, RequestChoice, WarningView
from web.payloads import Built, PayloadBuilder, assistant_choices, check_provider, providers
from web.source import Loaded, StoreSource

MsgId = Annotated[str | None, QueryParameter(max_length=300)]
MAX_PHASE_CHARS = 200_000


def request_choice(loaded: Loaded, provider: str, upto: str | None, repair: bool) -> RequestChoice:
    """The request asked for, with the alternatives the page offers (providers, assistant replies)."""
    choices, total = assistant_choices(loaded)
    return RequestChoice(
        conversation_id=loaded.summary.conversation_id,
        provider=provider,
        upto=upto or None,
        repair=repair,
        providers=providers(),
        choices=choices,
        choices_total=total,
    )


def load_and_build(
    source: StoreSource, payloads: PayloadBuilder, conversation_id: str, provider: str, upto: str | None, repair: bool
) -> tuple[Loaded, Built]:
    """The conversation and one provider's request for it (404 for an unknown provider, conversation or upto)."""
    check_provider(provider)
    loaded = source.load(conversation_id)
    return loaded, payloads.build(loaded, provider, upto=upto or None, repair=repair)


def payload_command(conversation_id: str, provider: str, upto: str | None, *, phases: bool = False) -> str:
    """The CLI command that builds the same request (or its phases) without the dashboard's time budget."""
    return export_then(
        conversation_id,
        *("traceloupe", "payload", "-", "--conversation", conversation_id, "--provider", provider),
        *(("--upto", upto) if upto else ()),
        "--phases" if phases else None,
    )


def _pretty(name: str, value: Any) -> PhaseView:
    text = json.dumps(value, indent=2, ensure_ascii=False, default=repr)
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
        conversation_id: FromPath[str],
        provider: FromPath[str],
        source: SourceDep,
        settings: SettingsDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        upto: MsgId = None,
        repair: FromQuery[bool] = False,
    ) -> Template:
        """The body pretty-printed and highlighted, the warnings, the cards beside it (hover links the two)."""

        def build(_: object) -> PayloadPage:
            loaded, built = load_and_build(source, payloads, conversation_id, provider, upto, repair)
            rendered = None
            if built.result is not None:
                rendered = render(built.result.body, {p: Mark(card=a) for p, a in built.anchors.items()})
            return PayloadPage(
                title=loaded.summary.title or "(no user text)",
                request=request_choice(loaded, provider, upto, repair),
                built=built,
                rendered=rendered,
                warnings=[WarningView.of(w) for w in built.result.warnings] if built.result else [],
                cards=conversation_page(loaded, settings),
                damaged_records=loaded.summary.damaged,
                attachments_root=settings.attachments_root is not None,
            )

        command = payload_command(conversation_id, provider, upto)
        page = await heavy.run(request.receive, build, what=f"the {provider} request", command=command)
        return Template("payload.html", context={"page": page})

    @get("/phases", name="payload-phases")
    async def phases(
        self,
        request: HTMXRequest,
        conversation_id: FromPath[str],
        provider: FromPath[str],
        source: SourceDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        upto: MsgId = None,
        repair: FromQuery[bool] = False,
    ) -> Template:
        """Every phase's output (``#payload-phases``); a plain request gets it as a page of its own."""

        def build(_: object) -> PhasesPanel:
            loaded, built = load_and_build(source, payloads, conversation_id, provider, upto, repair)
            phases: list[PhaseView] = []
            provenance = PhaseView("provenance", "", False)
            if built.result is not None:
                phases = [_pretty(name, value) for name, value in built.result.phases.items()]
                phases.append(_pretty("warnings", built.result.warnings_json()))
                provenance = _pretty("provenance", built.result.provenance)
            return PhasesPanel(
                title=loaded.summary.title or "(no user text)",
                request=request_choice(loaded, provider, upto, repair),
                built=built,
                phases=phases,
                provenance=provenance,
            )

        command = payload_command(conversation_id, provider, upto, phases=True)
        panel = await heavy.run(request.receive, build, what=f"the {provider} request's phases", command=command)
        template = "_payload_phases.html" if request.htmx else "payload_phases.html"
        return Template(template, context={"page": panel}, headers={"Vary": "HX-Request"})
