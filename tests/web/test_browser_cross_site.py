"""Cross-site CPU denial of service, in a real browser: another site's <img> gets 403, its link opens the page.

The hostile page is served from ``localhost`` and the dashboard from ``127.0.0.1``: two
sites to the browser, so Chromium marks the requests ``Sec-Fetch-Site: cross-site``.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from tests.web.web_corpus import make_app
from web.bodies.builder import PayloadBuilder

pytestmark = pytest.mark.browser

playwright_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = Path("/usr/bin/chromium")
HEAVY = "/conversations/c-long/payload/gemini"


def _serve(server: uvicorn.Server) -> threading.Thread:
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    return thread


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = PayloadBuilder._build

    def counting(self: PayloadBuilder, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(args[1]))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(PayloadBuilder, "_build", counting)
    return seen


@pytest.fixture
def answered() -> list[tuple[str, int]]:
    return []


@pytest.fixture
def dashboard(builds: list[str], answered: list[tuple[str, int]]) -> Iterator[str]:
    """The dashboard, noting each request's path and status as the server answered it.

    The browser reports a refused cross-site image only as a failed load (CORP), so the
    statuses are read on the server side.
    """
    app = make_app()

    async def noting(scope: Any, receive: Any, send: Any) -> None:
        async def send_noting(message: Any) -> None:
            if message["type"] == "http.response.start":
                answered.append((scope["path"], message["status"]))
            await send(message)

        await app(scope, receive, send_noting)

    server = uvicorn.Server(uvicorn.Config(noting, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    server.config.port = _free_port()
    thread = _serve(server)
    yield f"http://127.0.0.1:{server.config.port}"
    server.should_exit = True
    thread.join(10)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def hostile(dashboard: str) -> Iterator[str]:
    page = (
        f'<!doctype html><img id="dos" src="{dashboard}{HEAVY}"><img src="{dashboard}{HEAVY}/phases">'
        f'<a id="go" href="{dashboard}{HEAVY}">a link</a>'
    ).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join(10)


def test_cpu_dos_other_sites_images_are_refused_and_their_links_open(
    dashboard: str, hostile: str, builds: list[str], answered: list[tuple[str, int]]
) -> None:
    if not CHROMIUM.exists():
        pytest.fail("Debian's Chromium is missing: run `apt-get install -y chromium` (scripts/test.sh does)")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        try:
            pg = browser.new_page()
            pg.goto(hostile)
            pg.wait_for_load_state("load")
            assert sorted(answered) == [(HEAVY, 403), (f"{HEAVY}/phases", 403)]
            assert builds == []  # nothing was built for the other site
            with pg.expect_navigation():
                pg.click("#go")
            assert pg.url == f"{dashboard}{HEAVY}"
            assert (HEAVY, 200) in answered
            assert builds == ["gemini"]  # the link opened the page, built once
        finally:
            browser.close()
