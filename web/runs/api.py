"""``/api/runs`` and ``/api/conversations/{id}/runs``: recorded replays, read-only (replays create them)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, get
from litestar.params import FromQuery, QueryParameter

from core.accounts.roles import Role
from core.store import RunView
from web import masking, urls
from web.auth.access import needs
from web.deps import SourceDep

Limit = Annotated[int, QueryParameter(ge=1, le=500)]
Cursor = Annotated[str | None, QueryParameter(max_length=300)]


@dataclass(frozen=True, slots=True)
class RunList:
    """Recorded runs, newest first (without their bodies unless asked)."""

    runs: list[dict[str, Any]]
    next_cursor: str | None


def _run(run: RunView, bodies: bool) -> dict[str, Any]:
    out = dataclasses.asdict(run)
    if not bodies:
        del out["request_body"], out["response_body"]
    return out


class ApiRunsController(Controller):
    """The runs the store holds, newest first, without their bodies unless ``bodies=1``."""

    opt = needs(Role.VIEWER)

    path = "/api"
    after_request = staticmethod(masking.mask_response)  # trace text goes out masked, as on the pages

    @get("/runs", tags=["runs"], sync_to_thread=True)
    def runs(
        self, source: SourceDep, cursor: Cursor = None, limit: Limit = 50, bodies: FromQuery[bool] = False
    ) -> RunList:
        """Recorded replays, newest first (read-only)."""
        found, next_cursor = source.runs(limit=limit, cursor=cursor)
        return RunList([_run(r, bodies) for r in found], next_cursor)

    @get("/conversations/{conversation_id:str}/runs", tags=["runs"], sync_to_thread=True)
    def conversation_runs(
        self,
        conversation_id: urls.PathId,
        source: SourceDep,
        cursor: Cursor = None,
        limit: Limit = 50,
        bodies: FromQuery[bool] = False,
    ) -> RunList:
        """One conversation's recorded replays, newest first (read-only)."""
        conversation_id = urls.from_segment(conversation_id)
        found, next_cursor = source.runs(conversation_id, limit=limit, cursor=cursor)
        return RunList([_run(r, bodies) for r in found], next_cursor)
