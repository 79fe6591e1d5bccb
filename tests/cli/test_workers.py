"""``serve --workers N``'s worker processes: each serves as a single ``serve`` does, memory settings included."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

import web.allocator
import web.cli.serve
from core.store import Store
from web.cli.workers import serve_worker
from web.settings import Settings


def test_a_worker_tunes_its_own_allocator_before_serving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The allocator's settings are per process; a spawned worker does not inherit the parent's."""
    db = str(tmp_path / "w.db")
    Store.open(db).close()
    calls: list[str] = []
    monkeypatch.setattr(web.allocator, "tune_allocator", lambda *a, **k: calls.append("tuned") or True)

    def serving(app: Any, sock: socket.socket, **options: Any) -> None:
        calls.append("served")

    monkeypatch.setattr(web.cli.serve, "run_server", serving)
    with socket.socket() as sock:
        serve_worker(db, Settings(), sock, {})
    assert calls == ["tuned", "served"]
