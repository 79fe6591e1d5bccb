"""The dashboard's request guard and response headers.

Every byte of a trace is hostile and the dashboard runs on a laptop next to a
browser that visits arbitrary sites (``../shared/security.md``). The guard wraps
the whole ASGI pipeline, outside routing, so it also covers 404s and static files:

1. ``Host`` must name this instance (loopback or a configured name). A missing
   Host is rejected and ``X-Forwarded-Host`` is never consulted: Litestar's own
   allowed-hosts middleware once fell back to it (PYSEC-2026-2603), and that
   fallback is exactly what a DNS-rebinding page needs.
2. A state-changing method must come from this origin: ``Sec-Fetch-Site`` must
   be ``same-origin`` (or ``none``: typed by the user), else an ``Origin`` header
   must match the Host. Litestar's CSRF token check runs after this; both must pass.
3. A declared ``Content-Length`` above the body limit is refused with 413 before
   the body is read; Litestar enforces the same limit on streamed bodies. The import
   upload (``POST /import``) has its own, explicit, larger limit (``body_limits``).

Security headers are added to every response by a ``before_send`` hook.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlsplit

import orjson
from litestar.enums import ScopeType
from litestar.types import ASGIApp, HTTPResponseStartEvent, Message, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

CSP = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        # Remote images in a trace stay unrequested: only our own files and inline data: images load.
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "object-src 'none'",
        "frame-ancestors 'none'",
    ]
)

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


def split_host(value: str) -> str:
    """The host name of a ``Host`` header without its port, lower case (``[::1]:8000`` -> ``::1``)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in cast("dict[str, Any]", scope).get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


class SecurityGuard:
    """ASGI wrapper: allowed hosts, same-origin state changes, and the declared body size."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: frozenset[str],
        max_body_bytes: int,
        body_limits: Mapping[str, int] | None = None,
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.max_body_bytes = max_body_bytes
        self.body_limits = dict(body_limits or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in (ScopeType.HTTP, ScopeType.WEBSOCKET):
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, reason = refusal
        if scope["type"] == ScopeType.WEBSOCKET:
            await send({"type": "websocket.close", "code": 1008, "reason": reason})
            return
        await _plain_refusal(send, status, reason, wants_json=_wants_json(scope))

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """Why this request is refused (status, reason), or None when it may proceed."""
        host = _header(scope, b"host")
        if not host or split_host(host) not in self.hosts:
            return 400, "Invalid host header: this dashboard answers only to its configured host names."
        method = str(cast("dict[str, Any]", scope).get("method", "GET")).upper()
        if method not in SAFE_METHODS and not _same_origin(scope, host):
            return 403, "Cross-origin request refused: state-changing requests must come from this dashboard."
        length = _header(scope, b"content-length")
        if length is not None:
            limit = self.limit_for(str(cast("dict[str, Any]", scope).get("path", "")), method)
            try:
                too_big = int(length) > limit
            except ValueError:
                return 400, "Invalid Content-Length header."
            if too_big:
                return 413, f"Request body too large: the limit is {limit:,} bytes."
        return None

    def limit_for(self, path: str, method: str) -> int:
        """The body limit of a request: a route's own explicit limit for a POST to it, else the general one."""
        if method == "POST" and path.rstrip("/") in self.body_limits:
            return self.body_limits[path.rstrip("/")]
        return self.max_body_bytes


def _same_origin(scope: Scope, host: str) -> bool:
    """The Sec-Fetch-Site / Origin check (the pattern of Go 1.25's CrossOriginProtection and Datasette).

    Requests with neither header come from non-browser clients, which cannot be
    driven by another site; the CSRF token still applies to them.
    """
    site = _header(scope, b"sec-fetch-site")
    if site is not None:
        return site.strip().lower() in ("same-origin", "none")
    origin = _header(scope, b"origin")
    if origin is None:
        return True
    if origin.strip().lower() == "null":
        return False
    parts = urlsplit(origin.strip())
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.strip().lower()


def _wants_json(scope: Scope) -> bool:
    path = str(cast("dict[str, Any]", scope).get("path", ""))
    accept = (_header(scope, b"accept") or "").lower()
    return path.startswith("/api/") or ("application/json" in accept and "text/html" not in accept)


async def _plain_refusal(send: Send, status: int, reason: str, *, wants_json: bool) -> None:
    if wants_json:
        body = orjson.dumps({"status_code": status, "detail": reason})
        content_type = b"application/json"
    else:
        body = reason.encode()
        content_type = b"text/plain; charset=utf-8"
    start: HTTPResponseStartEvent = {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode())],
    }
    await send(start)
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def add_security_headers(message: Message, scope: Scope) -> None:
    """``before_send`` hook: the security headers on every response, errors and static files included."""
    if message["type"] != "http.response.start":
        return
    start = cast("dict[str, Any]", message)
    headers: list[tuple[bytes, bytes]] = list(start.get("headers", ()))
    present = {bytes(k).lower() for k, _ in headers}
    headers.extend(h for h in SECURITY_HEADERS if h[0] not in present)
    if b"cache-control" not in present:
        # Trace pages must not linger in shared or back/forward caches.
        headers.append((b"cache-control", b"no-store"))
    start["headers"] = headers
