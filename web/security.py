"""The dashboard's request guard and response headers.

Every byte of a trace is hostile and the dashboard runs on a laptop next to a
browser that visits arbitrary sites. The guard wraps
the whole ASGI pipeline, outside routing, so it also covers 404s and static files:

1. ``Host`` must name this instance (loopback or a configured name), parsed
   strictly as ``name[:port]``. A missing Host is rejected and ``X-Forwarded-Host``
   is never consulted: Litestar's own allowed-hosts middleware once fell back to it
   (PYSEC-2026-2603), and that fallback is exactly what a DNS-rebinding page needs.
2. Another site may link to a page but not embed or fetch one: a request whose
   Fetch Metadata says it comes from another site is refused unless it is a
   top-level navigation (an ``<img>`` pointing at a heavy page costs the server
   CPU on every visit of the hostile page).
3. A state-changing method must come from this origin: ``Sec-Fetch-Site`` must
   be ``same-origin`` (or ``none``: typed by the user), and an ``Origin`` header,
   whenever present, must match the Host. Litestar's CSRF token check runs after
   this; both must pass. The one exception is a path that authenticates with a
   key in ``Authorization`` (``key_paths``: the OTLP export), which no browser sends
   on its own, so another site cannot make one: its handler requires the key.
4. A declared ``Content-Length`` above the body limit is refused with 413 before
   the body is read; Litestar enforces the same limit on streamed bodies. The import
   upload (``POST /import``) has its own, explicit, larger limit (``body_limits``).
5. ``HEAD`` is answered wherever ``GET`` is: it runs as a GET and the body is dropped.
6. A request body that stops arriving is given up after ``body_timeout`` seconds of
   silence (408), so a slow client cannot hold a connection and a worker forever.

Security headers are added to every response by a ``before_send`` hook. Every value
from a request that reaches a log line goes through ``log_safe`` first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlsplit

import anyio
import orjson
from litestar.enums import ScopeType
from litestar.exceptions import HTTPException
from litestar.types import ASGIApp, HTTPResponseStartEvent, Message, Receive, ReceiveMessage, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

OTHER_SITES = frozenset({"cross-site", "same-site"})
"""Sec-Fetch-Site values of a request another site started. ``same-site`` counts: another port of this
host, or a sibling subdomain, is another origin that has no business embedding the dashboard."""

EMBEDDING_DESTINATIONS = frozenset({"iframe", "frame", "object", "embed", "fencedframe"})
"""Navigations that put the page inside another site's page: refused like subresources (the page
would not show, CSP frame-ancestors forbids it, but the server would still build it)."""

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

PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()"
    for feature in (
        "accelerometer",
        "autoplay",
        "camera",
        "display-capture",
        "fullscreen",
        "geolocation",
        "gyroscope",
        "hid",
        "magnetometer",
        "microphone",
        "midi",
        "payment",
        "publickey-credentials-get",
        "screen-wake-lock",
        "serial",
        "usb",
        "xr-spatial-tracking",
    )
)
"""Powerful browser features the dashboard never uses, so nothing injected into it may. Clipboard access stays
with the browser's own prompt: the copy button writes, and the browser tests read what it wrote."""

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", PERMISSIONS_POLICY.encode()),
)

# RFC 9110 Host = uri-host [ ":" port ]; no userinfo, no path, nothing after the port.
_HOST = re.compile(r"\[(?P<v6>[0-9a-f:.]+)\](?::[0-9]{1,5})?|(?P<name>[a-z0-9._-]+)(?::[0-9]{1,5})?")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def split_host(value: str) -> str | None:
    """The host name of a ``Host`` header without its port, lower case (``[::1]:8000`` -> ``::1``).

    None when the value is not a bare ``host[:port]``: ``127.0.0.1:8201@evil.example`` names
    evil.example to some parsers and loopback to others, so it names nothing here.
    """
    match = _HOST.fullmatch(value.strip().lower())
    if match is None:
        return None
    return match["v6"] or match["name"]


def log_safe(value: object) -> str:
    """``value`` as one log line's worth of text: control characters (a newline forging a line) escaped."""
    return _CONTROL.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), str(value))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in cast("dict[str, Any]", scope).get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


class SecurityGuard:
    """ASGI wrapper: allowed hosts, other sites kept out, same-origin state changes, body size and pace, HEAD."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: frozenset[str],
        max_body_bytes: int,
        body_limits: Mapping[str, int] | None = None,
        body_timeout: float = 30.0,
        key_paths: frozenset[str] = frozenset(),
    ) -> None:
        self.app = app
        self.key_paths = key_paths
        self.hosts = hosts
        self.max_body_bytes = max_body_bytes
        self.body_limits = dict(body_limits or {})
        self.body_timeout = body_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in (ScopeType.HTTP, ScopeType.WEBSOCKET):
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            status, reason = refusal
            if scope["type"] == ScopeType.WEBSOCKET:
                await send({"type": "websocket.close", "code": 1008, "reason": reason})
                return
            await _plain_refusal(send, status, reason, wants_json=_wants_json(scope), head=_is_head(scope))
            return
        if scope["type"] == ScopeType.HTTP:
            receive = _paced(receive, self.body_timeout)
            if _is_head(scope):
                scope = cast("Scope", {**scope, "method": "GET"})
                send = _without_body(send)
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """Why this request is refused (status, reason), or None when it may proceed."""
        host = _header(scope, b"host")
        if not host or split_host(host) not in self.hosts:
            return 400, "Invalid host header: this dashboard answers only to its configured host names."
        if _from_another_site(scope):
            return 403, "Cross-site request refused: other sites may link to this dashboard, not load from it."
        method = str(cast("dict[str, Any]", scope).get("method", "GET")).upper()
        path = str(cast("dict[str, Any]", scope).get("path", "")).rstrip("/")
        if method not in SAFE_METHODS and path not in self.key_paths and not _same_origin(scope, host):
            return 403, "Cross-origin request refused: state-changing requests must come from this dashboard."
        length = _header(scope, b"content-length")
        if length is not None:
            limit = self.limit_for(path, method)
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


def _is_head(scope: Scope) -> bool:
    return str(cast("dict[str, Any]", scope).get("method", "")).upper() == "HEAD"


def _from_another_site(scope: Scope) -> bool:
    """Fetch Metadata says another site started this request, and it is not a top-level navigation.

    Browsers that send no Fetch Metadata (and non-browser clients) are left to the other checks.
    """
    site = (_header(scope, b"sec-fetch-site") or "").strip().lower()
    if site not in OTHER_SITES:
        return False
    mode = (_header(scope, b"sec-fetch-mode") or "").strip().lower()
    dest = (_header(scope, b"sec-fetch-dest") or "").strip().lower()
    return mode != "navigate" or dest in EMBEDDING_DESTINATIONS


def _same_origin(scope: Scope, host: str) -> bool:
    """The Sec-Fetch-Site / Origin check (the pattern of Go 1.25's CrossOriginProtection and Datasette).

    Requests with neither header come from non-browser clients, which cannot be
    driven by another site; the CSRF token still applies to them. An Origin, when
    present, must name this dashboard whatever Sec-Fetch-Site says (``none``, typed
    by the user, does not excuse a foreign one), with one exception: ``null`` beside
    ``same-origin``, which is what Chromium sends for our own form posts under
    ``Referrer-Policy: no-referrer``.
    """
    site = (_header(scope, b"sec-fetch-site") or "").strip().lower()
    if site and site not in ("same-origin", "none"):
        return False
    origin = _header(scope, b"origin")
    if origin is None:
        return True
    if origin.strip().lower() == "null":
        return site == "same-origin"
    parts = urlsplit(origin.strip())
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.strip().lower()


def _paced(receive: Receive, timeout: float) -> Receive:
    """``receive`` that gives up (408) when the body stops arriving for ``timeout`` seconds.

    Only while the body is incomplete: afterwards ``receive`` waits for the client to leave,
    which is how a long build learns that nobody is waiting for it any more.
    """
    complete = False

    async def paced() -> ReceiveMessage:
        nonlocal complete
        if complete:
            return await receive()
        try:
            with anyio.fail_after(timeout):
                message = await receive()
        except TimeoutError:
            raise HTTPException(status_code=408, detail="The request body stopped arriving.") from None
        if message["type"] != "http.request" or not message.get("more_body", False):
            complete = True
        return message

    return paced


def _without_body(send: Send) -> Send:
    """``send`` for a HEAD request answered as a GET: the headers as they are, an empty body."""

    async def head_send(message: Message) -> None:
        if message["type"] == "http.response.body":
            if message.get("more_body", False):
                return
            message = {"type": "http.response.body", "body": b"", "more_body": False}
        await send(message)

    return head_send


def _wants_json(scope: Scope) -> bool:
    path = str(cast("dict[str, Any]", scope).get("path", ""))
    accept = (_header(scope, b"accept") or "").lower()
    return path.startswith("/api/") or ("application/json" in accept and "text/html" not in accept)


async def _plain_refusal(send: Send, status: int, reason: str, *, wants_json: bool, head: bool = False) -> None:
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
    await send({"type": "http.response.body", "body": b"" if head else body, "more_body": False})


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
