"""``/api``: the dashboard's data as JSON, for scripts and for the OpenAPI schema at ``/schema``.

Messages go out through ``core.MESSAGES_ADAPTER`` (the one JSON door), so an API
client reads exactly the stored format of FORMAT.md, subclasses and unknown keys
included. Payloads and diffs are the adapters' own output; a damaged record is a
422 that names it (the seed's contract error). Runs are in ``web.controllers.api_runs``.
Every answer goes out with the secrets in its trace text masked, as the pages show them
(``web.masking``); one value is revealed by ``/api/conversations/{id}/secrets/{digest}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, get
from litestar.exceptions import HTTPException
from litestar.params import FromQuery, QueryParameter

from core import MESSAGES_ADAPTER
from core.providers.request_diff import diff_requests
from core.store import ConversationSummary
from web import masking, urls
from web.controllers.diff import build_both, diff_command
from web.controllers.payloads import ModelName, MsgId, load_and_build, payload_command
from web.deps import HeavyDep, PayloadsDep, SourceDep
from web.errors import error_responses
from web.listing import ListQuery
from web.payloads import Built

MAX_LIMIT = 500
Limit = Annotated[int, QueryParameter(ge=1, le=MAX_LIMIT)]
Cursor = Annotated[str | None, QueryParameter(max_length=300)]


@dataclass(frozen=True, slots=True)
class ConversationList:
    """One keyset page of conversations, most recent activity first; ``next_cursor`` fetches the next."""

    conversations: list[ConversationSummary]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class ConversationMessages:
    """A window of one conversation's top-level messages, each with its trace, in the stored JSON format."""

    conversation_id: str
    summary: ConversationSummary
    total: int
    offset: int
    messages: list[dict[str, Any]]
    next_offset: int | None


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


@dataclass(frozen=True, slots=True)
class Diff:
    """Every difference between two providers' bodies, each with the cause it most likely has."""

    conversation_id: str
    left: str
    right: str
    upto: str | None
    changes: list[dict[str, Any]]
    causes: dict[str, int]


def _usable(built: Built) -> Any:
    if built.damaged is not None or built.result is None:
        raise HTTPException(status_code=422, detail=f"{built.damaged.message if built.damaged else 'no request'}")
    return built.result


class ApiController(Controller):
    """Read-only JSON views of the same data the pages show."""

    path = "/api"
    after_request = staticmethod(masking.mask_response)  # trace text goes out masked, as on the pages

    @get("/conversations", name="api-conversations", tags=["conversations"], sync_to_thread=True)
    def conversations(
        self,
        source: SourceDep,
        q: Annotated[str, QueryParameter(max_length=200)] = "",
        damaged: FromQuery[bool] = False,
        runs: FromQuery[bool] = False,
        kind: Annotated[str, QueryParameter(max_length=40)] = "",
        sort: Annotated[str, QueryParameter(max_length=20)] = "recent",
        cursor: Cursor = None,
        limit: Limit = 50,
    ) -> ConversationList:
        """The list page's query as JSON: search, filters (damaged, has runs, contains a kind), keyset pages."""
        query = ListQuery(q=q, damaged=damaged, runs=runs, kind=kind, sort=sort, after=cursor, limit=limit)
        page = source.list(query.store_query())
        return ConversationList(conversations=list(page.items), next_cursor=page.next_cursor)

    @get("/conversations/{conversation_id:str}", name="api-conversation", tags=["conversations"], sync_to_thread=True)
    def conversation(
        self,
        conversation_id: urls.PathId,
        source: SourceDep,
        offset: Annotated[int, QueryParameter(ge=0)] = 0,
        limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 100,
    ) -> ConversationMessages:
        """Top-level messages ``[offset, offset + limit)`` of one conversation, in order, with its figures."""
        conversation_id = urls.from_segment(conversation_id)
        loaded = source.load(conversation_id)
        messages = loaded.messages
        window = list(messages[offset : offset + limit])
        end = offset + len(window)
        return ConversationMessages(
            conversation_id=conversation_id,
            summary=loaded.summary,
            total=len(messages),
            offset=offset,
            messages=MESSAGES_ADAPTER.dump_python(window, mode="json"),
            next_offset=end if end < len(messages) else None,
        )

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
            result = _usable(built)
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

    @get("/conversations/{conversation_id:str}/diff", tags=["payloads"], responses=error_responses(422))
    async def diff(
        self,
        request: Request[Any, Any, Any],
        conversation_id: urls.PathId,
        source: SourceDep,
        payloads: PayloadsDep,
        heavy: HeavyDep,
        left: Annotated[str, QueryParameter(max_length=40)],
        right: Annotated[str, QueryParameter(max_length=40)],
        upto: MsgId = None,
        repair: FromQuery[bool] = False,
    ) -> Diff:
        """The structural diff of two providers' bodies, each change with its cause; 422 when damaged."""
        conversation_id = urls.from_segment(conversation_id)

        def build(_: object) -> Diff:
            _, lbuilt, rbuilt = build_both(source, payloads, conversation_id, left, right, upto, repair)
            diff = diff_requests(_usable(lbuilt), _usable(rbuilt))
            return Diff(conversation_id, left, right, upto or None, diff.changes_json(), diff.counts)

        command = diff_command(conversation_id, left, right, upto)
        return await heavy.run(request.receive, build, what=f"the {left} / {right} diff", command=command)
