"""``/api/conversations/{id}/payload/{provider}``: the body a provider would receive, as JSON.

The adapters' own output; a damaged record is a 422 that names it (the seed's contract error). For a step
imported from a provider log, ``recorded`` is the request that provider accepted and its differences from ``body``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import Controller, get
from litestar.di import Provide
from litestar.exceptions import ValidationException
from litestar.params import FromQuery

from core.accounts.roles import Role
from web import masking
from web.auth.access import needs
from web.bodies.builder import usable_result
from web.bodies.recorded import RecordedComparison, recorded_comparison, recorded_for
from web.bodies.requests import AskedDep, asked_request
from web.deps import WorkDep
from web.errors import error_responses


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
    recorded: RecordedComparison | None = None
    """For a step imported from this provider's log (``upto`` its reply): the request the provider accepted and
    its differences from ``body`` (the payload page's recorded-request panel)."""


class PayloadApiController(Controller):
    """One provider's request body for a conversation, as JSON."""

    opt = needs(Role.VIEWER)

    path = "/api"
    dependencies = {"asked": Provide(asked_request, sync_to_thread=False)}  # noqa: RUF012 - Litestar reads it
    after_request = staticmethod(masking.mask_response)  # trace text goes out masked, as on the pages

    @get(
        "/conversations/{conversation_id:str}/payload/{provider:str}",
        tags=["payloads"],
        responses=error_responses(400, 422),
    )
    async def payload(self, work: WorkDep, asked: AskedDep, phases: FromQuery[bool] = False) -> Payload:
        """The body ``provider`` would receive (``upto``: the request that produced that message); 422 when damaged."""
        conversation_id, provider = asked.conversation_id, asked.provider
        if asked.options.errors:
            raise ValidationException("; ".join(e.message for e in asked.options.errors))

        def build(_: object) -> Payload:
            loaded, built = asked.build(work.source, work.payloads)
            result = usable_result(built)
            recorded = recorded_for(loaded, asked.upto)
            comparison = None
            if recorded is not None and recorded.provider == provider:
                comparison = recorded_comparison(recorded, result.body)
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
                recorded=comparison,
            )

        return await work.run(build, what=asked.what, command=asked.command(phases=phases))
