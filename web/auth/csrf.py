"""CSRF protection that leaves API-key requests alone.

A browser never attaches an ``Authorization`` header on its own, so a request carrying a valid API key cannot have
been forged by another site: it needs no CSRF token (the OWASP CSRF cheat sheet: only credentials a browser sends
by itself, cookies, need one). Every other state-changing request, cookie-authenticated or anonymous, is checked as
Litestar's ``CSRFMiddleware`` checks it; a key that does not verify (unknown, revoked, forged) exempts nothing.
"""

from __future__ import annotations

from typing import Any

from litestar.config.csrf import CSRFConfig
from litestar.connection import ASGIConnection
from litestar.enums import ScopeType
from litestar.middleware.csrf import CSRFMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from web.auth.principals import BEARER, Gate


class KeyAwareCSRF(CSRFMiddleware):
    """Litestar's CSRF check, skipped for a state-changing request whose bearer key verifies."""

    def __init__(self, app: ASGIApp, config: CSRFConfig, gate: Gate) -> None:
        super().__init__(app, config)
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if await self._carries_a_valid_key(scope):
            await self.app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    async def _carries_a_valid_key(self, scope: Scope) -> bool:
        if scope["type"] != ScopeType.HTTP or scope.get("method", "GET") in self.config.safe_methods:
            return False  # a safe request keeps the usual path, which hands out the CSRF cookie
        connection: ASGIConnection[Any, Any, Any, Any] = ASGIConnection(scope)
        if connection.headers.get("authorization", "")[: len(BEARER)].lower() != BEARER:
            return False
        principal = await self.gate.principal_of(connection)  # the guard reuses this answer
        return principal is not None and principal.via == "key"
