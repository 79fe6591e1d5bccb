"""A stub provider per test, the environment that points every dialect at it, and a store holding the replay
conversation."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store import Store
from tests.replay.replay_data import seed_store
from web.devtools.stub_provider import StubServer

CANARY_KEY = "sk-canary-7f3a9c1e5b"


@pytest.fixture
def stub_env(stub: StubServer) -> dict[str, str]:
    """Every dialect's key set to the canary and its base URL to the stub."""
    return stub_environment(stub)


def stub_environment(stub: StubServer) -> dict[str, str]:
    """Every dialect's key set to the canary and its base URL to ``stub``."""
    base = stub.base_url
    return {
        "OPENAI_API_KEY": CANARY_KEY, "OPENAI_BASE_URL": f"{base}/v1",
        "ANTHROPIC_API_KEY": CANARY_KEY, "ANTHROPIC_BASE_URL": base,
        "GEMINI_API_KEY": CANARY_KEY, "GEMINI_BASE_URL": base,
        "ZHIPU_API_KEY": CANARY_KEY, "ZHIPU_BASE_URL": f"{base}/api/paas/v4",
        "DOUBAO_API_KEY": CANARY_KEY, "DOUBAO_BASE_URL": f"{base}/api/v3",
    }  # fmt: skip


@pytest.fixture
def replay_store(tmp_path: Path) -> Iterator[Store]:
    """The replay conversation and its damaged variant, in the SQLite file ``tmp_path/replay.db`` (which a
    command given ``--db`` opens too)."""
    with Store.open(str(tmp_path / "replay.db")) as opened:
        seed_store(opened, tmp_path)
        yield opened


@pytest.fixture
def store(replay_store: Store) -> Store:
    """The replay tests' store is the seeded one."""
    return replay_store


class Listener:
    """A loopback port that records every connection made to it and answers nothing useful."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.seen: list[bytes] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.seen.append(conn.recv(65536))
                    conn.sendall(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                except OSError:
                    self.seen.append(b"")

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    """A second origin that must see nothing."""
    server = Listener()
    yield server
    server.close()
