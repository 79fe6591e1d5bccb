"""``/api/conversations/{id}/diff``: every difference between two providers' bodies, with its cause, as JSON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, get
from litestar.exceptions import ValidationException
from litestar.params import FromQuery, QueryParameter

from core.accounts.roles import Role
from core.providers.registry import dialect_names
from core.providers.request_diff import diff_requests
from web import masking, urls
from web.auth.access import needs
from web.bodies.builder import usable_result
from web.bodies.diffs import build_both, diff_command
from web.bodies.requests import MsgId, asked_options
from web.deps import WorkDep
from web.errors import error_responses
from web.request_options import model_limit

ProviderParam = Annotated[str, QueryParameter(max_length=40, schema_extra={"enum": dialect_names()})]
"""A dialect's name: the schema lists every one the registry found."""


@dataclass(frozen=True, slots=True)
class Diff:
    """Every difference between two providers' bodies, each with the cause it most likely has."""

    conversation_id: str
    left: str
    right: str
    upto: str | None
    changes: list[dict[str, Any]]
    causes: dict[str, int]


class DiffApiController(Controller):
    """The structural diff of two providers' bodies, as JSON."""

    opt = needs(Role.VIEWER)

    path = "/api"
    after_request = staticmethod(masking.mask_response)  # trace text goes out masked, as on the pages

    @get("/conversations/{conversation_id:str}/diff", tags=["payloads"], responses=error_responses(400, 422))
    async def diff(
        self,
        request: Request[Any, Any, Any],
        work: WorkDep,
        conversation_id: urls.PathId,
        left: ProviderParam,
        right: ProviderParam,
        upto: MsgId = None,
        repair: FromQuery[bool] = False,
    ) -> Diff:
        """The structural diff of two providers' bodies, each change with its cause; 422 when damaged."""
        conversation_id = urls.from_segment(conversation_id)
        # The request options of the page's query (web.request_options), both sides' models bounding max tokens.
        options = asked_options(request, lambda: (model_limit(left, None), model_limit(right, None)))
        if options.errors:
            raise ValidationException("; ".join(e.message for e in options.errors))

        def build(_: object) -> Diff:
            _, lbuilt, rbuilt = build_both(
                work.source, work.payloads, conversation_id, left, right, upto, repair, options
            )
            diff = diff_requests(usable_result(lbuilt), usable_result(rbuilt))
            return Diff(conversation_id, left, right, upto or None, diff.changes_json(), diff.counts)

        root = work.payloads.options.attachments_root
        command = diff_command(conversation_id, left, right, upto, root, options)
        return await work.run(build, what=f"the {left} / {right} diff", command=command)
