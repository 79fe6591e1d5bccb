"""The server's connection limits, against a real uvicorn on a loopback port (slowloris, connection floods)."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from tests.web.web_corpus import make_app
from web.cli.serve import listen
from web.serving import server_options
from web.settings import Settings

REQUEST = b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server() -> Iterator[tuple[int, Settings]]:
    settings = Settings(header_timeout_seconds=0.5, max_connections=3, heavy_concurrency=1)
    port = _free_port()
    options = server_options(settings) | {"log_level": "warning"}
    srv = uvicorn.Server(uvicorn.Config(make_app(**_fields(settings)), host="127.0.0.1", port=port, **options))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not srv.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.started
    yield port, settings
    srv.should_exit = True
    thread.join(10)


def _fields(settings: Settings) -> dict[str, Any]:
    return {
        "header_timeout_seconds": settings.header_timeout_seconds,
        "max_connections": settings.max_connections,
        "heavy_concurrency": settings.heavy_concurrency,
    }


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    return sock


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """True when the server closes the connection within ``seconds`` (recv sees EOF or a reset)."""
    sock.settimeout(seconds)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_slowloris_idle_connection_is_closed(server: tuple[int, Settings]) -> None:
    port, _ = server
    with _connect(port) as sock:
        assert _closed_within(sock, 5)


def test_slowloris_headers_trickling_in_are_cut_off(server: tuple[int, Settings]) -> None:
    port, _ = server
    with _connect(port) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\n")
        for _ in range(4):
            time.sleep(0.2)
            try:
                sock.sendall(b"X-Slow: 1\r\n")
            except OSError:
                break
        assert _closed_within(sock, 5)


def test_prompt_client_is_served_and_kept_alive(server: tuple[int, Settings]) -> None:
    import http.client

    port, _ = server
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        for _ in range(2):  # two requests on one connection, each well within the header timeout
            conn.request("GET", "/api/runs")
            response = conn.getresponse()
            assert response.status == 200
            response.read()
            time.sleep(0.3)
    finally:
        conn.close()


def _server_end(client: socket.socket) -> socket.socket:
    """The server's socket of ``client``'s connection, found among this process's descriptors."""
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                sock = socket.socket(fileno=os.dup(int(fd)))
                with contextlib.suppress(OSError):
                    if sock.getpeername() == client.getsockname():
                        return sock
                sock.close()
    raise AssertionError("no server socket for this connection")


def test_responses_are_not_held_for_the_clients_acks_on_the_serve_socket() -> None:
    """``serve`` listens on a socket asyncio leaves Nagle's algorithm on for; each connection turns it off."""
    listening = listen("127.0.0.1", 0)
    assert listening.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
    options = server_options(Settings()) | {"log_level": "warning"}
    srv = uvicorn.Server(uvicorn.Config(make_app(), **options))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    try:
        with _connect(listening.getsockname()[1]) as client:
            client.sendall(REQUEST)
            assert client.recv(12).startswith(b"HTTP/1.1 200")
            with _server_end(client) as served:
                assert served.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        srv.should_exit = True
        thread.join(10)
        listening.close()


def test_connection_flood_gets_503_past_the_cap(server: tuple[int, Settings]) -> None:
    port, settings = server
    idle = [_connect(port) for _ in range(settings.max_connections)]
    try:
        time.sleep(0.1)
        with _connect(port) as extra:
            extra.sendall(REQUEST)
            assert extra.recv(65536).startswith(b"HTTP/1.1 503")
    finally:
        for sock in idle:
            sock.close()
