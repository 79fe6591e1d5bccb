"""The SDK clients a send goes through: built once per (SDK, base URL, key, timeout) and kept for the process.

Building a client costs milliseconds (an HTTP client, its transport and pool), and a new one opens a new
connection, with a TLS handshake, for every request; a kept one reuses its pooled connections. The SDKs'
clients are safe to share between threads. A key names its client by digest only: the client holds the key,
as it did for a single call, and nothing here keeps it elsewhere.

No client follows a redirect: httpx drops only ``Authorization`` when a redirect leaves the origin, so an SDK
that sends its key in another header (``x-goog-api-key``, ``x-api-key``) would hand it to whatever origin a
307 names. ``core.replay.send`` records a 3xx instead.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import ssl
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from core.replay.endpoints import Endpoint
from core.sdk_imports import SDK_IMPORT_LOCK

FOLLOW_REDIRECTS = False
"""Every SDK follows redirects by default (openai/anthropic ``_base_client``, google-genai ``_api_client``) and
re-sends the key to wherever it is sent; a 3xx is recorded as the run's error instead."""

MAX_IDLE_CLIENTS = 16
"""Clients kept while no send uses them; past it the least recently used idle one is closed (a key rotated,
a test's stub gone): an unclosed client leaks its pooled sockets until the collector happens by."""


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS context the SDKs' HTTP client (httpx2, which all three depend on) makes by default, made once.

    Each client would read the system's CA files again, a large part of a short reply's time
    (``bench/PERFORMANCE.md``); the context is safe to share between clients and threads.
    """
    with SDK_IMPORT_LOCK:
        import httpx2

    return httpx2.create_ssl_context()


def build_client(endpoint: Endpoint, timeout: float) -> Any:
    """A new SDK client for the endpoint's wire: no retries, no redirects, ``timeout`` seconds per call."""
    return endpoint.wire.client(endpoint.base_url, endpoint.key, timeout, FOLLOW_REDIRECTS, tls_context())


_Key = tuple[str, str | None, str, float]


@dataclass(slots=True)
class _Kept:
    client: Any
    users: int = 0


class ClientCache:
    """Kept clients, handed out to any number of threads at once; an idle one past the bound is closed."""

    def __init__(self, max_idle: int = MAX_IDLE_CLIENTS) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[_Key, _Kept] = OrderedDict()  # least recently used first
        self._max_idle = max_idle

    @contextmanager
    def client(self, endpoint: Endpoint, timeout: float) -> Iterator[Any]:
        """The endpoint's client for the block; built on first use (outside the lock: a build is slow)."""
        key = (endpoint.wire.sdk_module, endpoint.base_url, _digest(endpoint.key), timeout)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                kept.users += 1
                self._kept.move_to_end(key)
        if kept is None:
            built = build_client(endpoint, timeout)
            with self._lock:
                kept = self._kept.setdefault(key, _Kept(built))
                kept.users += 1
                self._kept.move_to_end(key)
            if kept.client is not built:  # another thread built one meanwhile
                built.close()
        try:
            yield kept.client
        finally:
            with self._lock:
                kept.users -= 1
                closing = self._evict()
            for client in closing:
                client.close()

    def close(self) -> None:
        """Close and forget every idle client (one in use is kept: its send goes on)."""
        with self._lock:
            closing = self._evict(keep=0)
        for client in closing:
            client.close()

    def _evict(self, keep: int | None = None) -> list[Any]:
        """Under the lock: take out the least recently used idle clients past ``keep``; the caller closes them."""
        bound = self._max_idle if keep is None else keep
        idle = [key for key, kept in self._kept.items() if kept.users == 0]
        return [self._kept.pop(key).client for key in idle[: max(0, len(idle) - bound)]]


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


CLIENTS = ClientCache()
"""The process's kept clients (every send goes through them)."""
atexit.register(CLIENTS.close)  # their sockets close before exit, not in whatever order the collector finds them
