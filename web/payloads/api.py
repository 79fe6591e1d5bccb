"""``/api/conversations/{id}/payload/{provider}``: the body a provider would receive, as JSON.

The adapters' own output; a damaged record is a 422 that names it (the seed's contract error).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import Controller, Request, get
from litestar.params import FromQuery

from web import masking, urls
from web.deps import HeavyDep, PayloadsDep, SourceDep
from web.errors import error_responses
from web.payloads.builder import usable_result
from web.payloads.service import ModelName, MsgId, load_and_build, payload_command


@dataclass(frozen=True, slots=True)
class Payload:
    """The request body a provider would receive, its warnings, and msg_id -> JSON pointers of the body."""

    conversation_id: str
    provider: str
    model: str
    upto: str | None
    repaired: list[str]
    body: dict[str, Any]
    warnings: list[dict[str, Any]]
    provenance: dict[str, list[str]]
    phases: dict[str, Any] | None
    preflight: dict[str, Any] | None = None
    """The preflight verdict for the model: SDK types and the provider's request-time rules."""


class PayloadApiController(Controller):
    """One provider's request body for a conversation, as JSON."""

    path = "/api"
    after_request = staticmethod(masking.mask_response)  # trace text goes out masked, as on the pages

    @get(
        "/conversations/{conversation_id:str}/payload/{provider:str}", tags=["payloads"], responses=error_responses(422)
    )
    async def payload(
        self,
        request: Request[Any, Any, Any],
        conversation_id: urls.PathId,
        provider: urls.PathId,
        source: SourceDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        upto: MsgId = None,
        repair: FromQuery[bool] = False,
        phases: FromQuery[bool] = False,
        model: ModelName = None,
    ) -> Payload:
        """The body ``provider`` would receive (``upto``: the request that produced that message); 422 when damaged."""
        conversation_id, provider = urls.from_segment(conversation_id), urls.from_segment(provider)

        def build(_: object) -> Payload:
            _, built = load_and_build(source, payloads, conversation_id, provider, upto, repair, model)
            result = usable_result(built)
            return Payload(
                conversation_id=conversation_id,
                provider=provider,
                model=result.model,
                upto=built.upto,
                repaired=list(built.healed),
                body=result.body,
                warnings=result.warnings_json(),
                provenance=result.provenance,
                phases=result.phases if phases else None,
                preflight=built.report.verdict.to_json() if built.report else None,
            )

        command = payload_command(conversation_id, provider, upto, phases=phases, model=model)
        return await heavy.run(request.receive, build, what=f"the {provider} request", command=command)
