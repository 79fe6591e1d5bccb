"""Accounts in Chromium: log in, be refused a replay as a viewer (the reason in place), log out; a reviewer's
replay says who started it, and an admin finds it in the audit log."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.accounts import Role
from core.store import Store
from tests.replay.replay_data import CONVERSATION
from tests.replay.web_server import replay_app, serving
from tests.web.accounts_data import PASSWORDS, add_accounts
from tests.web.test_browser import Visit, _shot, _until, browser, page, visit  # noqa: F401 - fixtures
from web.devtools.stub_provider import StubServer
from web.replays.service import RunService

pytestmark = pytest.mark.browser
RUN_SECONDS = 60.0
"""How long a replay may take to start and to end: its POST and its job share the machine with the browser and the
stub, so a loaded machine slows it far more than a page's change."""


@pytest.fixture
def base_url(store: Store, stub: StubServer, stub_env: dict[str, str]) -> Iterator[str]:
    add_accounts(store)
    with serving(replay_app(store, RunService(store, environ=lambda: stub_env, timeout=2))) as url:
        yield url


def _log_in(pg: object, role: Role) -> None:
    pg.fill("[data-login-name]", role.value)  # type: ignore[attr-defined]
    pg.fill("[data-login-password]", PASSWORDS[role])  # type: ignore[attr-defined]
    pg.click("[data-login-submit]")  # type: ignore[attr-defined]
    _until(lambda: pg.query_selector(f"[data-account={role.value}]") is not None)  # type: ignore[attr-defined]


def test_a_viewer_logs_in_is_refused_a_replay_in_place_and_logs_out(visit: Visit, stub: StubServer) -> None:  # noqa: F811
    pg, _ = visit(f"/conversations/{CONVERSATION}")
    assert "/login?next=" in pg.url  # type: ignore[attr-defined]
    _log_in(pg, Role.VIEWER)
    assert pg.url.endswith(f"/conversations/{CONVERSATION}")  # type: ignore[attr-defined]

    pg.select_option("#rerun-form [data-rerun-provider]", "anthropic")  # type: ignore[attr-defined]
    pg.click("#rerun-form [data-rerun-submit]")  # type: ignore[attr-defined]
    _until(lambda: pg.query_selector("#rerun-form + [data-htmx-error]") is not None)  # type: ignore[attr-defined]
    said = pg.inner_text("#rerun-form + [data-htmx-error]")  # type: ignore[attr-defined]
    assert "403" in said and "viewer role cannot" in said and "needs the reviewer role" in said
    assert "reload the page" not in said  # a fresh form would not help
    _shot(pg, "accounts-viewer-refused.png")
    assert stub.state.requests == []

    pg.click("[data-logout] button")  # type: ignore[attr-defined]
    _until(lambda: "/login" in pg.url)  # type: ignore[attr-defined]
    pg.goto(pg.url.replace("/login", "/"))  # type: ignore[attr-defined]
    assert "/login?next=" in pg.url  # type: ignore[attr-defined]
    assert pg.query_selector("[data-account]") is None  # type: ignore[attr-defined]


def test_a_reviewers_replay_says_who_started_it_and_an_admin_sees_it_in_the_audit_log(
    visit: Visit,  # noqa: F811
    stub: StubServer,
) -> None:
    pg, watch = visit(f"/conversations/{CONVERSATION}")
    _log_in(pg, Role.REVIEWER)
    pg.select_option("#rerun-form [data-rerun-provider]", "anthropic")  # type: ignore[attr-defined]
    pg.click("#rerun-form [data-rerun-submit]")  # type: ignore[attr-defined]
    started = lambda: pg.query_selector("#runs-live [data-run] [data-started-by]") is not None  # type: ignore[attr-defined]  # noqa: E731
    _until(started, timeout=RUN_SECONDS)
    assert pg.inner_text("#runs-live [data-run] [data-started-by]") == "by reviewer"  # type: ignore[attr-defined]
    run_id = pg.get_attribute("#runs-live [data-run]", "data-run")  # type: ignore[attr-defined]
    _until(lambda: pg.get_attribute(f"#run-{run_id}", "data-run-status") == "ok", timeout=RUN_SECONDS)  # type: ignore[attr-defined]
    assert len(stub.state.requests) == 1

    pg.click("[data-logout] button")  # type: ignore[attr-defined]
    _until(lambda: "/login" in pg.url)  # type: ignore[attr-defined]
    pg.goto(pg.url.split("/login")[0] + "/admin/audit")  # type: ignore[attr-defined]
    _log_in(pg, Role.ADMIN)
    row = pg.inner_text("[data-audit-event='replay.start']")  # type: ignore[attr-defined]
    assert "reviewer" in row and CONVERSATION in row
    _shot(pg, "accounts-audit.png")
    assert run_id and not (watch.dialogs or watch.foreign or watch.errors), watch
