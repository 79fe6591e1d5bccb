"""``serve`` and ``demo``: a busy port is said to be busy, the URL is printed once listening, ``kill`` cleans up."""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from web.cli import main
from web.devtools import demo_data


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        yield sock.getsockname()[1]


@pytest.fixture
def small_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demo_data, "build", functools.partial(demo_data.build, long_records=20))


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"role": "user", "msg_type": "text", "content": "hi", "msg_id": "m"}) + "\n")
    assert main(["import", str(path), "--db", str(tmp_path / "t.db"), "-q"]) == 0
    return str(tmp_path / "t.db")


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_a_busy_port_is_refused_with_one_line_and_no_url(
    command: str,
    busy_port: int,
    db: str,
    small_demo: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    served: list[Any] = []
    monkeypatch.setattr("web.cli.serve.run_server", lambda *a, **k: served.append(a))
    extra = ["--db", db] if command == "serve" else []
    assert main([command, "--port", str(busy_port), *extra]) == 2
    err = capsys.readouterr().err
    assert f"traceloupe: port {busy_port} on 127.0.0.1 is busy; choose another with --port" in err.splitlines()
    assert "Traceloupe demo on" not in err and "Traceloupe on" not in err and served == []


def test_the_url_is_printed_once_the_port_listens(
    db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reached: list[str] = []

    def run_server(app: Any, sock: socket.socket, **options: Any) -> None:
        (url,) = re.findall(r"http://127\.0\.0\.1:(\d+)/", capsys.readouterr().err)
        with socket.create_connection(("127.0.0.1", int(url)), timeout=5):  # accepted by the listening socket
            reached.append(url)

    monkeypatch.setattr("web.cli.serve.run_server", run_server)
    assert main(["serve", "--db", db, "--port", "0"]) == 0
    assert len(reached) == 1 and reached[0] != "0"


def test_demo_removes_its_temporary_folder_when_killed(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "web.cli", "demo", "--port", "0"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 240
        for line in proc.stderr:
            if "Traceloupe demo on http://" in line:
                break
            assert time.monotonic() < deadline, "the demo did not start"
        assert [p.name for p in scratch.iterdir() if p.name.startswith("traceloupe-demo-")]  # it is in use
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
    assert [p.name for p in scratch.iterdir() if p.name.startswith("traceloupe-demo-")] == []
    assert proc.returncode != 0
