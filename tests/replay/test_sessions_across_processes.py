"""A login, a logout and a revoked key hold across ``traceloupe serve`` processes on one database (real processes,
real sockets), on both backends: sessions and keys live in the store, so no process has its own answer.

The browser test also pins how the session cookie is scoped: host-only on 127.0.0.1, so Chromium sends it to every
port of that host (cookies ignore ports), and named after the store's shared secret, so every process of one store
reads the same cookie and a dashboard over another store on the same host keeps its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest

from core.accounts import Role
from core.store import Store
from tests.replay.replay_data import CONVERSATION, seed_store
from tests.replay.test_server_processes import Server
from tests.store.store_pg import BACKENDS, create_pg_database, drop_pg_database, pg_database_url
from tests.web.accounts_data import PASSWORDS, add_accounts
from tests.web.test_browser import _shot, _until, browser  # noqa: F401 - the browser fixture
from web.settings import SESSION_COOKIE_PREFIX

PAGE = f"/conversations/{CONVERSATION}"


@pytest.fixture(scope="module", params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A seeded database with an account of each role, on each backend."""
    tmp_path = tmp_path_factory.mktemp("shared")
    if request.param == "sqlite":
        url = str(tmp_path / "shared.db")
    else:
        name = create_pg_database()
        request.addfinalizer(lambda: drop_pg_database(name))
        url = pg_database_url(name)
    with Store.open(url) as store:
        seed_store(store, tmp_path)
        add_accounts(store)
    yield url


@pytest.fixture(scope="module")
def two_processes(db: str) -> Iterator[tuple[Server, Server]]:
    """Two ``serve`` processes on the database, as two machines behind a load balancer would run them."""
    env = {k: v for k, v in os.environ.items() if k not in ("TRACELOUPE_SECRET", "TRACELOUPE_DATABASE_URL")}
    a, b = Server(db, env, page="/login"), Server(db, env, page="/login")
    try:
        a.ready(), b.ready()
        yield a, b
    finally:
        errors = a.stop() + b.stop()
        assert "Traceback" not in errors, errors[-2000:]


def _log_in(pg: object, role: Role) -> None:
    pg.fill("[data-login-name]", role.value)  # type: ignore[attr-defined]
    pg.fill("[data-login-password]", PASSWORDS[role])  # type: ignore[attr-defined]
    pg.click("[data-login-submit]")  # type: ignore[attr-defined]
    _until(lambda: pg.query_selector(f"[data-account={role.value}]") is not None)  # type: ignore[attr-defined]


@pytest.mark.browser
def test_a_session_from_one_process_works_on_another_and_a_logout_there_ends_it_here(
    browser: object,  # noqa: F811 - the fixture imported above
    two_processes: tuple[Server, Server],
) -> None:
    a, b = two_processes
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    try:
        on_a = context.new_page()
        on_a.goto(a.base + PAGE)
        assert "/login?next=" in on_a.url
        _log_in(on_a, Role.REVIEWER)
        assert on_a.url == a.base + PAGE

        (session,) = [c for c in context.cookies() if c["name"].startswith(SESSION_COOKIE_PREFIX)]
        # Host-only (no leading dot), so sent to 127.0.0.1 on any port; never to scripts; not to other sites' posts.
        assert session["domain"] == "127.0.0.1" and session["httpOnly"] and session["sameSite"] == "Lax"

        on_b = context.new_page()  # the same browser, the other process: no login asked
        on_b.goto(b.base + PAGE)
        assert on_b.url == b.base + PAGE
        assert on_b.inner_text("[data-account=reviewer]").strip() != ""
        _shot(on_b, "session-on-another-process.png")

        on_b.click("[data-logout] button")
        _until(lambda: "/login" in on_b.url)
        # The browser forgot the cookie; an attacker who kept it gets nowhere either: the session ended in the store.
        context.add_cookies([session])
        on_a.goto(a.base + PAGE)
        assert "/login?next=" in on_a.url
        assert on_a.query_selector("[data-account]") is None
    finally:
        context.close()


def test_a_revoked_key_is_refused_at_once_by_every_process(db: str, two_processes: tuple[Server, Server]) -> None:
    with Store.open(db) as store:
        record, key = store.api_keys.create("read", "dashboard script", user="viewer")
    auth = {"authorization": f"Bearer {key}"}
    a, b = two_processes
    for server in (a, b):
        assert httpx.get(f"{server.base}/api/conversations", headers=auth, timeout=20).status_code == 200
    with Store.open(db) as store:
        store.api_keys.revoke(record.id)
    for server in (a, b):  # no cache in either process: the next request is refused
        assert httpx.get(f"{server.base}/api/conversations", headers=auth, timeout=20).status_code == 401
