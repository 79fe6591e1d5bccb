"""The audit log's record of what a request did: each success of a route declared ``audited_as`` an action.

Recorded after the response is sent, with who asked (``web.auth.principals``), the path's first
parameter as the target (the conversation, the suite), and the status; a refused or failed request
is not an action done. Logins and account changes are recorded where they happen (``core.accounts``).
"""

from __future__ import annotations

from typing import Any, cast

import anyio.to_thread
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from core.accounts import Accounts, Principal
from web import urls
from web.auth.access import AUDIT_OPT
from web.auth.principals import STATE_KEY


class AuditMiddleware:
    """ASGI middleware (inside routing): record the audited routes' successes."""

    def __init__(self, app: ASGIApp, accounts: Accounts) -> None:
        self.app = app
        self.accounts = accounts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler = scope.get("route_handler")
        action = handler.opt.get(AUDIT_OPT) if handler is not None else None
        if action is None:
            await self.app(scope, receive, send)
            return
        status = 0

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        await self.app(scope, receive, watched)
        if 0 < status < 400:
            await anyio.to_thread.run_sync(self._record, scope, str(action), status)

    def _record(self, scope: Scope, action: str, status: int) -> None:
        state = cast("dict[str, Any]", scope).get("state", {})
        principal = state.get(STATE_KEY)
        params = cast("dict[str, Any]", scope).get("path_params") or {}
        target = next((str(v) for v in params.values()), None)
        peer = scope.get("client")
        client = peer[0] if peer is not None else None
        self.accounts.record(
            principal.name if isinstance(principal, Principal) else None,
            action,
            urls.from_segment(target) if target is not None else None,
            {"path": str(scope.get("path", "")), "status": status},
            client,
        )
