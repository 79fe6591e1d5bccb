"""The HTTP server's own limits: how long a client may take to send its headers, and how many connections stay open.

uvicorn bounds idle keep-alive connections but not a connection that opens and then
sends its request line and headers a byte at a time (slowloris): nothing is armed
until the first response. ``HeaderTimeoutH11Protocol`` closes a connection whose
request headers are not complete ``header_timeout`` seconds after its first byte
(or after it opened). Body reads are bounded in the ASGI layer (``web.security``),
where the 408 can be answered; the number of open connections by uvicorn's
``limit_concurrency`` (beyond it, 503).
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from web.settings import Settings

MAX_HEADER_BYTES = 16 * 1024
"""The largest request line plus headers accepted (h11's default, made explicit)."""

KEEP_ALIVE_SECONDS = 5


class HeaderTimeoutH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing connections that are slow to send a request's headers."""

    header_timeout: float = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        send_without_delay(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._waiting_for_headers():
            self._arm()
        super().data_received(data)
        if not self._waiting_for_headers():
            self._disarm()

    def _waiting_for_headers(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self._waiting_for_headers() and not self.transport.is_closing():
            self.conn.send(h11.ConnectionClosed())
            self.transport.close()


def send_without_delay(transport: asyncio.BaseTransport) -> None:
    """Turn Nagle's algorithm off for a TCP connection, as asyncio does only for sockets made with ``IPPROTO_TCP``.

    A socket bound by ``socket.create_server`` (``serve``) or by uvicorn's workers has protocol 0, so
    asyncio leaves it on: a response's body then waits for the client's delayed ACK of its headers,
    40 ms on every kept-alive request.
    """
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def protocol_for(settings: Settings) -> type[HeaderTimeoutH11Protocol]:
    """The protocol class with this instance's header timeout."""
    return type("Protocol", (HeaderTimeoutH11Protocol,), {"header_timeout": settings.header_timeout_seconds})


def server_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's options besides the app and the address: its limits, no Server header, forwarded headers ignored."""
    return {
        "http": protocol_for(settings),
        "limit_concurrency": settings.max_connections,
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
        "log_level": "info",
        "server_header": False,
        "proxy_headers": False,
    }
