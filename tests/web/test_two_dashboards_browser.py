"""Two dashboards in one browser: a demo on one port beside a store's dashboard on another, each with its own
CSRF cookie (cookies ignore ports); and an htmx request that fails shows its error where it was made."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from core.store import Store
from tests.replay.conftest import stub_env  # noqa: F401 - a fixture
from tests.replay.replay_data import CONVERSATION, seed_store
from tests.replay.web_server import serving
from tests.web.test_browser import ARTIFACTS, _shot, _until, browser  # noqa: F401 - fixtures
from web.app import create_app
from web.devtools.stub_provider import Reply, StubServer
from web.processes import with_shared_secret
from web.replays.service import RunService
from web.settings import Settings

pytestmark = pytest.mark.browser

JSONL = b'{"role":"user","msg_type":"text","content":"hi","msg_id":"m1","conversation_id":"c1","create_ts":1}\n'


@pytest.fixture
def two_servers(tmp_path: Path, stub_env: dict[str, str]) -> Iterator[tuple[str, str]]:  # noqa: F811
    """Two dashboards over two stores, each signing with its store's secret, as ``serve`` and ``demo`` do."""
    env = {k: v for k, v in stub_env.items() if not k.startswith(("ZHIPU", "DOUBAO"))}
    with ExitStack() as stack:
        urls = []
        for name in ("demo", "mine"):
            (tmp_path / name).mkdir()
            store = stack.enter_context(Store.open(str(tmp_path / name / "store.db")))
            seed_store(store, tmp_path / name)
            service = RunService(store, environ=lambda: env, timeout=2)
            settings = with_shared_secret(Settings(), store, environ={})
            urls.append(stack.enter_context(serving(create_app(settings, store, runs=service))))
        yield urls[0], urls[1]


def test_two_dashboards_on_one_host_keep_their_forms_working(
    browser: object,  # noqa: F811 - the fixture imported above
    two_servers: tuple[str, str],
    stub: StubServer,
    tmp_path: Path,
) -> None:
    demo, mine = two_servers
    upload = tmp_path / "t.jsonl"
    upload.write_bytes(JSONL)
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    try:
        first, second = context.new_page(), context.new_page()
        first.goto(demo + "/check")
        second.goto(mine + "/check")  # its cookie arrives after the first page's
        for pg in (first, second):
            pg.set_input_files("input[name=data]", str(upload))
            pg.click("form.upload button[type=submit]")
            pg.wait_for_selector("[data-check-report], [data-error]")
            assert pg.query_selector("[data-error]") is None, pg.inner_text("main")
            assert "1 messages" in pg.inner_text("[data-check-report]")

        # htmx forms too: Re-run on each dashboard, the older page first.
        first.goto(demo + f"/conversations/{CONVERSATION}")
        second.goto(mine + f"/conversations/{CONVERSATION}")
        for pg in (first, second):
            stub.state.script.append(Reply(text="Sunny."))
            pg.select_option("#rerun-form [data-rerun-provider]", "openai")
            pg.click("#rerun-form [data-rerun-submit]")
            _until(lambda pg=pg: pg.query_selector("#runs-live [data-run]") is not None)
            assert pg.query_selector("[data-htmx-error]") is None
        assert len(stub.state.requests) == 2
        _shot(first, "two-dashboards-first-after-the-second.png")
        names = sorted(c["name"] for c in context.cookies())
        assert len(names) == 2 and all(n.startswith("csrftoken_") for n in names), names
    finally:
        context.close()


def test_an_htmx_request_that_fails_shows_its_error_in_place(
    browser: object,  # noqa: F811 - the fixture imported above
    two_servers: tuple[str, str],
    stub: StubServer,
) -> None:
    _, mine = two_servers
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    try:
        pg = context.new_page()
        pg.goto(mine + f"/conversations/{CONVERSATION}")
        context.clear_cookies()  # the form's token no longer matches a cookie: the server answers 403
        pg.select_option("#rerun-form [data-rerun-provider]", "openai")
        pg.click("#rerun-form [data-rerun-submit]")
        _until(lambda: pg.query_selector("[data-htmx-error]") is not None)
        error = pg.locator("#rerun-form ~ [data-htmx-error], #rerun-form [data-htmx-error]").first
        assert error.is_visible()
        text = error.inner_text()
        assert text.startswith("403 Forbidden: CSRF token verification failed") and "reload the page" in text, text
        assert stub.state.requests == []
        pg.locator("[data-htmx-error]").first.scroll_into_view_if_needed()
        _shot(pg, "htmx-error-in-place.png")
        assert (ARTIFACTS / "htmx-error-in-place.png").exists()

        # The network gone: a request that gets no answer says so too.
        pg.route("**/*", lambda route: route.abort() if route.request.method == "POST" else route.continue_())
        pg.click("#rerun-form [data-rerun-submit]")
        _until(lambda: "did not answer" in pg.locator("[data-htmx-error]").first.inner_text())
    finally:
        context.close()
