"""Several ``traceloupe serve`` processes on one database behave as one server (real processes, real sockets).

The stub provider runs in the test process, so every provider call any server makes is counted here.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from core.store import Store
from tests.replay.conftest import stub_environment
from tests.replay.replay_data import CONVERSATION, seed_store
from tests.replay.web_server import free_port
from tests.store.store_pg import BACKENDS, create_pg_database, drop_pg_database, pg_database_url
from tests.web.web_corpus import csrf_cookie
from web.devtools.stub_provider import StubHandler, StubServer
from web.settings import CSRF_COOKIE_PREFIX

ROOT = Path(__file__).resolve().parents[2]
PAGE = f"/conversations/{CONVERSATION}"
HX = {"HX-Request": "true"}
START_SECONDS = 120
"""A generous bound on a server's start: on a loaded machine two processes' starts took 30 to 40 s."""


class Server:
    """One ``traceloupe serve`` process on a free loopback port; ``ready`` waits until ``page`` answers 200 (a page
    open to anyone: ``/login`` once accounts exist)."""

    def __init__(self, db: str, env: dict[str, str], *extra: str, page: str = "/") -> None:
        self.page = page
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "web.cli", "serve", "--db", db, "--port", str(self.port), *extra]
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )

    def ready(self) -> Server:
        """This server, once its page answers; stopped, not left running into the next tests, when it never does."""
        deadline = time.monotonic() + START_SECONDS
        while True:
            assert self.process.poll() is None, self.process.communicate()[1][-2000:]
            try:
                if httpx.get(f"{self.base}{self.page}", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"the server did not start: {self.stop()[-2000:]}")
            time.sleep(0.1)

    def stop(self) -> str:
        """Stop the server (SIGTERM) and return what it wrote to stderr."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            return self.process.communicate(timeout=40)[1]
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.communicate()[1]


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A seeded database on each backend."""
    if request.param == "sqlite":
        url = str(tmp_path / "shared.db")
    else:
        name = create_pg_database()
        request.addfinalizer(lambda: drop_pg_database(name))
        url = pg_database_url(name)
    with Store.open(url) as store:
        seed_store(store, tmp_path)
    yield url


def _server_env(stub: StubServer) -> dict[str, str]:
    """The test process's environment, without a secret or a database of its own, pointed at ``stub``."""
    env = {k: v for k, v in os.environ.items() if k not in ("TRACELOUPE_SECRET", "TRACELOUPE_DATABASE_URL")}
    return {**env, **stub_environment(stub)}


@pytest.fixture
def server_env(stub: StubServer) -> dict[str, str]:
    return _server_env(stub)


@pytest.fixture
def release(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Set it to let the stub answer its slow calls: each is held until then (its delay is only an upper bound),
    so a run stays in flight exactly as long as the test needs it to."""
    released = threading.Event()

    def held(handler: StubHandler, seconds: float) -> bool:
        released.wait(seconds)
        return True

    monkeypatch.setattr(StubHandler, "_wait_for_client", held)
    yield released
    released.set()


@pytest.fixture(scope="module")
def workers() -> Iterator[tuple[Server, list[str]]]:
    """One ``serve --workers 2`` on a seeded SQLite file and its worker pids, shared by the tests of its workers.

    Stopping it (SIGTERM) must end every worker and exit cleanly, whatever the tests did to it.
    """
    stub = StubServer().start()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "shared.db")
        with Store.open(db) as store:
            seed_store(store, Path(tmp))
        server = Server(db, _server_env(stub), "--workers", "2")
        try:
            server.ready()
            children = Path(f"/proc/{server.process.pid}/task/{server.process.pid}/children").read_text().split()
            pids = [pid for pid in children if "spawn_main" in _command_of(pid)]
            yield server, pids
        finally:
            errors = server.stop()
            stub.shutdown()
            stub.server_close()
    assert "Traceback" not in errors and server.process.returncode == 0
    assert all(not Path(f"/proc/{pid}").exists() for pid in pids)


def _form(client: httpx.Client, base: str) -> dict[str, str]:
    """The Re-run form as ``base`` served it: its CSRF token (the cookie the browser keeps) and its key."""
    response = client.get(f"{base}{PAGE}")
    key = re.search(r'name="idempotency_key" value="([^"]+)"', response.text)
    assert key is not None
    fields = {"idempotency_key": key.group(1), "provider": "openai", "model_as_typed": "1"}
    (name,) = [n for n in dict(client.cookies) if n.startswith(CSRF_COOKIE_PREFIX)]
    return {"_csrf_token": csrf_cookie(client.cookies), "_csrf_cookie": name, **fields}


def _post(base: str, form: dict[str, str], model: str) -> httpx.Response:
    """The form posted to ``base`` by a browser holding the cookie of the server that served it."""
    fields = dict(form)
    cookies = {fields.pop("_csrf_cookie"): form["_csrf_token"]}
    with httpx.Client(cookies=cookies, timeout=20) as own:
        headers = {"Origin": base, **HX}
        return own.post(f"{base}{PAGE}/runs", data={**fields, "model": model}, headers=headers)


def _run_id(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text[:500]
    found = re.search(r'data-run="([0-9a-f]{32})"', response.text)
    assert found is not None, response.text[:500]
    return found.group(1)


def _status(base: str, run_id: str) -> str:
    found = re.search(r'data-run-status="([a-z_]+)"', httpx.get(f"{base}/runs/{run_id}", headers=HX).text)
    assert found is not None
    return found.group(1)


def test_two_processes_on_one_database_behave_as_one(
    db: str, server_env: dict[str, str], stub: StubServer, release: threading.Event
) -> None:
    a, b = Server(db, server_env), Server(db, server_env)
    try:
        a.ready(), b.ready()
        with httpx.Client(timeout=20) as browser:
            # A form served by one process is accepted by the other.
            crossed = _run_id(_post(b.base, _form(browser, a.base), "stub-fast"))
            # The same key posted to both at once is one run and one provider call.
            form = _form(browser, a.base)
            barrier = threading.Barrier(2)
            answers: list[str] = []

            def press(base: str) -> None:
                barrier.wait()
                answers.append(_run_id(_post(base, form, "stub-slow-60")))

            threads = [threading.Thread(target=press, args=(base,)) for base in (a.base, b.base)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(answers) == 2 and answers[0] == answers[1]
            # The run in flight shows as running on both processes' pages, whichever sends it.
            assert _status(a.base, answers[0]) == _status(b.base, answers[0]) == "running"
            release.set()
            deadline = time.monotonic() + 40
            while _status(a.base, answers[0]) == "running":
                assert time.monotonic() < deadline, "the run did not finish"
                time.sleep(0.2)
            assert _status(b.base, answers[0]) == "ok" and _status(a.base, crossed) == "ok"
            models = [r.body.get("model") for r in stub.state.requests]
            assert sorted(models) == ["stub-fast", "stub-slow-60"]
            # A page loaded before a restart still posts after it.
            before_restart = _form(browser, a.base)
            a.stop()
            a = Server(db, server_env)
            a.ready()
            assert _status(a.base, _run_id(_post(a.base, before_restart, "stub-fast"))) in ("running", "ok")
    finally:
        errors = a.stop() + b.stop()
    assert "Traceback" not in errors


def test_serve_with_workers_starts_that_many_processes_sharing_one_secret(workers: tuple[Server, list[str]]) -> None:
    server, pids = workers
    assert len(pids) == 2
    # Connections land on either worker; every form posts wherever its post lands.
    with httpx.Client(timeout=20) as browser:
        for _ in range(6):
            assert _run_id(_post(server.base, _form(browser, server.base), "stub-fast"))


def _connections_by_worker(workers: list[str], port: int) -> list[int]:
    """How many established connections to ``port`` each worker process holds (from ``/proc``)."""
    established = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].split(":")[1], 16) == port and fields[3] == "01":  # local port, ESTABLISHED
            established.add(fields[9])  # the socket's inode
    counts = []
    for pid in workers:
        inodes = set()
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                link = os.readlink(fd)
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
        counts.append(len(inodes & established))
    return counts


def test_workers_take_even_shares_of_new_connections(workers: tuple[Server, list[str]]) -> None:
    """Kept-alive connections stay on the worker that accepted them, so each worker must get its share."""
    server, pids = workers
    # A burst, as a browser or a proxy opens its connections: accepted before any request is sent.
    burst = [socket.create_connection(("127.0.0.1", server.port), timeout=20) for _ in range(40)]
    try:
        for sock in burst:
            sock.sendall(b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert all(sock.recv(12) == b"HTTP/1.1 200" for sock in burst)
        shares = _connections_by_worker(pids, server.port)
    finally:
        for sock in burst:
            sock.close()
    assert sum(shares) == 40 and min(shares) >= 10, shares


def _command_of(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
