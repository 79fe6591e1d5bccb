"""Logging in and out of the dashboard, and the attacks on it: spraying, an old session, a forged form, a leak.

One app over a store with an account of each role (``tests.web.accounts_data``); the spraying test has its
own, with a low login limit (the test client has one address, and failed logins count per address).
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core.accounts import Accounts, LoginPolicy, Role
from core.store import Store
from core.store.api_keys import SHOWN_CHARS
from tests.replay.canary import dump_database
from tests.web.accounts_data import PASSWORDS, add_accounts, csrf_token, log_in
from tests.web.test_security import upstream_upload_leak
from tests.web.web_corpus import BASE_URL, csrf_cookie, temp_store
from web.accounts.pages import REFUSED
from web.app import create_app
from web.cli import main
from web.settings import SESSION_COOKIE_PREFIX, Settings

JSONL = b'{"role": "user", "msg_type": "text", "content": "hello", "conversation_id": "audited"}\n'


@pytest.fixture(scope="module")
def store() -> Store:
    made = temp_store()
    add_accounts(made)
    return made


@pytest.fixture(scope="module")
def accounts(store: Store) -> Accounts:
    return Accounts(store)


@pytest.fixture(scope="module")
def app(store: Store) -> Litestar:
    return create_app(Settings(), store)


@pytest.fixture
def client(app: Litestar) -> Iterator[TestClient[Litestar]]:
    with TestClient(app, base_url=BASE_URL) as made:
        yield made


def _session_cookie(client: TestClient[Litestar]) -> tuple[str, str]:
    (found,) = [(k, v) for k, v in client.cookies.items() if k.startswith(SESSION_COOKIE_PREFIX)]
    return found


def test_a_login_sets_an_httponly_lax_cookie_named_per_store(client: TestClient[Litestar]) -> None:
    data = {"name": "viewer", "password": PASSWORDS[Role.VIEWER], "_csrf_token": csrf_token(client), "next": "/"}
    response = client.post("/login", data=data, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/"
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "secure" not in cookie
    assert client.get("/").status_code == 200


def test_the_session_cookie_is_named_per_store() -> None:
    # Cookies ignore ports: two stores' dashboards on one host must not read or overwrite each other's sessions.
    one, other = Settings(csrf_secret="1" * 16 + "a" * 16), Settings(csrf_secret="2" * 16 + "b" * 16)
    assert one.session_cookie_name != other.session_cookie_name
    assert one.session_cookie_name == Settings(csrf_secret="1" * 16 + "a" * 16).session_cookie_name  # its processes
    assert one.session_cookie_name not in (one.csrf_cookie_name, other.csrf_cookie_name)


def test_the_cookie_is_secure_when_asked(store: Store) -> None:
    # Over HTTPS: a client sends Secure cookies nowhere else.
    with TestClient(create_app(Settings(secure_cookies=True), store), base_url="https://127.0.0.1:8000") as client:
        assert "secure" in client.get("/login").headers["set-cookie"].lower()  # the CSRF cookie
        data = {"name": "viewer", "password": PASSWORDS[Role.VIEWER], "_csrf_token": csrf_cookie(client.cookies)}
        response = client.post("/login", data=data, follow_redirects=False)
        assert "secure" in response.headers["set-cookie"].lower()


def test_behind_a_tls_proxy_a_login_works_with_secure_cookies(store: Store) -> None:
    # As the README sets it up: serve on loopback, --secure-cookies, --allowed-host the public name the proxy
    # forwards in Host; the browser's Origin is the proxy's https one.
    settings = Settings(allowed_hosts=("traces.example.com",), secure_cookies=True)
    public = "https://traces.example.com"
    with TestClient(create_app(settings, store), base_url=public) as client:
        data = {"name": "reviewer", "password": PASSWORDS[Role.REVIEWER], "_csrf_token": csrf_token(client)}
        browser = {"Origin": public, "Sec-Fetch-Site": "same-origin"}
        response = client.post("/login", data=data, headers=browser, follow_redirects=False)
        assert response.status_code == 303 and "secure" in response.headers["set-cookie"].lower()
        assert 'data-account="reviewer"' in client.get("/").text


def test_a_failed_login_says_nothing_of_which_part_was_wrong(client: TestClient[Litestar]) -> None:
    token = csrf_token(client)
    wrong = client.post("/login", data={"name": "viewer", "password": "not it at all", "_csrf_token": token})
    unknown = client.post("/login", data={"name": "nobody", "password": "not it at all", "_csrf_token": token})
    assert wrong.status_code == unknown.status_code == 401
    assert REFUSED in wrong.text and REFUSED in unknown.text
    assert wrong.text == unknown.text


def test_the_next_page_stays_on_this_dashboard(client: TestClient[Litestar]) -> None:
    for hostile in ("//evil.example/", "https://evil.example/", "/\\\\evil.example"):
        data = {"name": "viewer", "password": PASSWORDS[Role.VIEWER], "_csrf_token": csrf_token(client)}
        response = client.post("/login", data={**data, "next": hostile}, follow_redirects=False)
        assert response.headers["location"] == "/"


def test_a_page_without_a_login_goes_to_the_form_and_back(client: TestClient[Litestar]) -> None:
    response = client.get("/suites?x=1", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=%2Fsuites%3Fx%3D1"
    assert client.get("/api/conversations").status_code == 401


def test_password_spraying_hits_the_rate_limit() -> None:
    store = temp_store()  # failed logins are counted in the store: this test's own
    add_accounts(store)
    with TestClient(create_app(Settings(login_policy=LoginPolicy(per_client=4)), store), base_url=BASE_URL) as client:
        token = csrf_token(client)
        for name in ("viewer", "reviewer", "admin", "nobody"):  # one common password against every account
            sprayed = {"name": name, "password": "Winter2026!!", "_csrf_token": token}
            assert client.post("/login", data=sprayed).status_code == 401
        right = {"name": "viewer", "password": PASSWORDS[Role.VIEWER], "_csrf_token": token}
        refused = client.post("/login", data=right, follow_redirects=False)
    assert refused.status_code == 401 and REFUSED in refused.text  # the right password, refused unchecked


def test_a_session_from_before_a_password_reset_is_refused(client: TestClient[Litestar], accounts: Accounts) -> None:
    accounts.create("temp", Role.VIEWER, "temporary password 1")
    data = {"name": "temp", "password": "temporary password 1", "_csrf_token": csrf_token(client)}
    assert client.post("/login", data=data, follow_redirects=False).status_code == 303
    assert client.get("/", follow_redirects=False).status_code == 200
    accounts.reset_password("temp", "temporary password 2")
    assert client.get("/", follow_redirects=False).status_code == 303


def test_logout_ends_the_session_in_the_store(client: TestClient[Litestar]) -> None:
    assert log_in(client, Role.VIEWER) == 303
    name, token = _session_cookie(client)
    response = client.post("/logout", headers={"x-csrftoken": csrf_token(client)}, follow_redirects=False)
    assert response.status_code == 303
    client.cookies.set(name, token)  # the old cookie, kept by an attacker
    assert client.get("/", follow_redirects=False).status_code == 303


def test_login_and_logout_need_the_csrf_token(client: TestClient[Litestar]) -> None:
    csrf_token(client)
    data = {"name": "viewer", "password": PASSWORDS[Role.VIEWER]}
    assert client.post("/login", data=data, follow_redirects=False).status_code == 403
    assert client.post("/logout", follow_redirects=False).status_code == 403


def test_a_viewer_is_refused_an_import_with_the_role_it_needs(client: TestClient[Litestar]) -> None:
    assert log_in(client, Role.VIEWER) == 303
    token = csrf_token(client)
    response = client.post("/import", files={"files": ("t.jsonl", JSONL)}, data={"_csrf_token": token})
    assert response.status_code == 403
    assert (
        "the viewer role cannot import, replay, or save and run suites; that needs the reviewer role" in response.text
    )


@upstream_upload_leak
def test_an_import_is_in_the_audit_log_with_who_did_it(client: TestClient[Litestar]) -> None:
    assert log_in(client, Role.REVIEWER) == 303
    # The token as a header: as a form field, Litestar's CSRF check parses the upload and leaves its files open.
    imported = client.post("/import", files={"files": ("t.jsonl", JSONL)}, headers={"x-csrftoken": csrf_token(client)})
    gc.collect()
    assert imported.status_code == 200
    assert client.get("/admin/audit").status_code == 403
    assert log_in(client, Role.ADMIN) == 303
    page = client.get("/admin/audit?user=reviewer").text
    assert 'data-audit-event="import"' in page
    assert 'data-audit-event="login"' in page


def test_an_admin_sees_the_keys_with_their_last_use_and_never_the_key(
    client: TestClient[Litestar], store: Store
) -> None:
    record, key = store.api_keys.create("read", "nightly report", user="reviewer")
    unused, _ = store.api_keys.create("write", "never used", user="reviewer")
    assert client.get("/api/conversations", headers={"authorization": f"Bearer {key}"}).status_code == 200
    assert log_in(client, Role.ADMIN) == 303
    page = client.get("/admin/audit?user=reviewer").text
    row = page.split(f'data-key-row="{record.id}"')[1].split("</tr>")[0]
    assert "nightly report" in row and "read" in row and record.prefix in row and "active" in row
    assert "never" not in row.split("data-key-last-used>")[1].split("</td>")[0]
    assert "never" in page.split(f'data-key-row="{unused.id}"')[1].split("</tr>")[0]
    assert key[SHOWN_CHARS:] not in page


@upstream_upload_leak
def test_no_password_key_or_session_token_leaks(
    client: TestClient[Litestar], store: Store, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    canary = "canary-password-9f8e7d6c"
    Accounts(store).create("canary", Role.ADMIN, canary)
    _, key = store.api_keys.create("admin", "canary key", user="canary")
    _, unnamed = store.api_keys.create("write", "a key of no account")
    hidden = [key[SHOWN_CHARS:], unnamed[SHOWN_CHARS:]]  # listings show the first characters; never the rest
    seen: list[str] = []
    token = csrf_token(client)
    typed_as_name = client.post("/login", data={"name": canary, "password": "x" * 12, "_csrf_token": token})
    seen.append(typed_as_name.text)
    response = client.post(
        "/login", data={"name": "canary", "password": canary, "_csrf_token": token}, follow_redirects=False
    )
    _, session = _session_cookie(client)
    for path in ("/", "/suites", "/admin/audit", "/login", "/api/conversations", "/import"):
        got = client.get(path)
        seen.append(got.text + repr(got.headers))
    seen.append(repr({k: v for k, v in response.headers.items() if k != "set-cookie"}) + response.text)
    client.cookies.clear()
    statuses: list[int] = []
    for bearer in (key, unnamed, key[:-1] + "x"):  # a program's requests, and one key mistyped
        headers = {"authorization": f"Bearer {bearer}"}
        for path in ("/api/conversations", "/admin/audit", "/nowhere"):
            got = client.get(path, headers=headers, follow_redirects=False)
            statuses.append(got.status_code)
            seen.append(got.text + repr(got.headers))
        posted = client.post("/import", files={"files": ("k.jsonl", JSONL)}, headers=headers)
        seen.append(posted.text + repr(posted.headers))
    gc.collect()  # the uploads' spooled files (Litestar leaves them to the collector)
    assert statuses == [200, 200, 404, 200, 403, 404, 401, 303, 404]  # the keys were taken, and refused
    for command in (["keys", "list"], ["keys", "list", "--json"], ["audit", "--json"], ["users", "list"]):
        assert main([*command, "--db", store.engine.url.render_as_string(hide_password=False)]) == 0
    out, err = capsys.readouterr()
    places = {
        "pages": "\n".join(seen),
        "logs": caplog.text,
        "database": dump_database(store),
        "command output": out + err,
    }
    for where, text in places.items():
        assert canary not in text, f"the password leaked into the {where}"
        assert session not in text, f"the session token leaked into the {where}"
        assert not any(part in text for part in hidden), f"a key leaked into the {where}"
