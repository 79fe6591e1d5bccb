"""A real dashboard (uvicorn on a free loopback port) over a seeded store, for the replay web tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn
from litestar import Litestar

from core.store import Store
from web.app import create_app
from web.replays.service import RunService
from web.settings import Settings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def replay_app(store: Store, service: RunService) -> Litestar:
    """The dashboard over the store's conversations, with replay on."""
    return create_app(Settings(), store, runs=service)


@contextmanager
def serving(app: Litestar, log_level: str = "warning") -> Iterator[str]:
    """Serve ``app`` in a thread; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level=log_level, lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def settled(client: httpx.Client, path: str, timeout: float = 10) -> str:
    """Poll a live region as htmx does until it stops polling (no ``hx-trigger`` left); returns the last partial."""
    deadline = time.monotonic() + timeout
    while True:
        html = client.get(path, headers={"HX-Request": "true"}).text
        if "hx-trigger" not in html:
            return html
        assert time.monotonic() < deadline, f"{path} did not finish"
        time.sleep(0.1)
