"""Every route declares what it needs, and the guard holds it: the route-by-role matrix, on both backends.

The route table of the app is walked, so a new route that forgets its ``opt=needs(...)`` fails here, and
every route is requested as anonymous, viewer, reviewer and admin. A refusal must be the guard's (401 or a
redirect to the login page; 403 naming the role needed); anything else means the request got past the guard.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core.accounts import Accounts, Role
from core.store import Store
from tests.store.store_pg import BACKENDS, empty_store_url
from tests.web.accounts_data import add_accounts, csrf_token, log_in
from tests.web.web_corpus import BASE_URL, csrf_cookie, make_app, temp_store
from web.app import create_app
from web.auth.access import OWN_KEY, PUBLIC, Access, declared
from web.settings import Settings

ANONYMOUS = None
CALLERS: tuple[Role | None, ...] = (ANONYMOUS, Role.VIEWER, Role.REVIEWER, Role.ADMIN)
_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")
SAMPLE = {"name": "app.css"}  # the one path parameter with a value that exists: the static file's


def _routes(app: Litestar) -> Iterator[tuple[str, str, Access | None]]:
    """(method, path, what it declares) for every handler but Litestar's own OPTIONS answers."""
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            for method in sorted(handler.http_methods - {"OPTIONS", "HEAD"}):
                yield method, route.path_format, declared(dict(handler.opt))


@pytest.fixture(scope="module", params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """The accounts of each role, on each backend (the guard reads sessions and keys from the store)."""
    with empty_store_url(request.param, tmp_path_factory.mktemp("access")) as url, Store.open(url) as made:
        add_accounts(made)
        yield made


@pytest.fixture(scope="module")
def app(store: Store) -> Litestar:
    return create_app(Settings(), store)


@pytest.fixture(scope="module")
def client(app: Litestar) -> Iterator[TestClient[Litestar]]:
    with TestClient(app, base_url=BASE_URL) as made:
        yield made


@pytest.fixture(scope="module")
def cookies(client: TestClient[Litestar]) -> dict[Role | None, dict[str, str]]:
    """Each caller's cookies: a CSRF cookie, and a session cookie for the logged-in ones."""
    made: dict[Role | None, dict[str, str]] = {}
    for caller in CALLERS:
        client.cookies.clear()
        if caller is not None:
            assert log_in(client, caller) == 303
        csrf_token(client)
        made[caller] = dict(client.cookies)
    return made


def test_every_route_declares_what_it_needs(app: Litestar) -> None:
    undeclared = [f"{method} {path}" for method, path, access in _routes(app) if access is None]
    assert undeclared == []
    assert len(list(_routes(app))) > 40


def test_a_route_without_a_declaration_is_refused() -> None:
    from litestar import get

    @get("/undeclared", sync_to_thread=False)
    def undeclared() -> str:
        return "reached"

    app = make_app([])
    app.register(undeclared)
    with TestClient(app, base_url=BASE_URL) as client:
        response = client.get("/undeclared")
    assert response.status_code == 403
    assert "reached" not in response.text


def _request(client: TestClient[Litestar], cookies: dict[str, str], method: str, path: str) -> tuple[int, str, str]:
    url = _PARAM.sub(lambda m: SAMPLE.get(m[1], "nobody-has-this"), path)
    client.cookies.clear()
    client.cookies.update(cookies)
    token = csrf_cookie(cookies)
    response = client.request(method, url, headers={"x-csrftoken": token}, follow_redirects=False)
    return response.status_code, response.headers.get("location", ""), response.text


def _guard_refused(status: int, location: str, text: str) -> bool:
    """The guard's own refusals: a login first (a redirect to the form, or 401), or a role too low (403)."""
    return (
        (status == 303 and location.startswith("/login?next="))
        or (status == 401 and "Log in to use this dashboard" in text)
        or (status == 403 and "role" in text)
    )


def test_the_route_by_role_matrix(
    app: Litestar, client: TestClient[Litestar], cookies: dict[Role | None, dict[str, str]]
) -> None:
    wrong: list[str] = []
    # Logout ends the session every other request uses: it goes last.
    for method, path, access in sorted(_routes(app), key=lambda route: route[1] == "/logout"):
        assert access is not None
        for caller, held in cookies.items():
            status, location, text = _request(client, held, method, path)
            where = f"{method} {path} as {caller.value if caller else 'anonymous'}: {status}"
            if access == OWN_KEY:  # a session is no key: the handler itself answers 401, past the guard
                if status != 401 or _guard_refused(status, location, text):
                    wrong.append(f"{where}, expected the route's own 401 asking for its key")
            elif access == PUBLIC or (caller is not None and caller.allows(access)):
                if _guard_refused(status, location, text) or status == 403:  # 403: not even CSRF may refuse
                    wrong.append(f"{where}, expected to pass the guard")
            elif caller is None:
                sent_to_login = status == 303 and location.startswith("/login?next=")
                if not (sent_to_login if method == "GET" and not path.startswith("/api/") else status == 401):
                    wrong.append(f"{where}, expected a login first")
            elif status != 403 or f"needs the {access.value} role" not in text:
                wrong.append(f"{where}, expected a refusal naming the {access.value} role")
    assert wrong == [], "\n".join(wrong)


def test_an_open_dashboard_without_accounts_needs_no_login() -> None:
    with TestClient(make_app([]), base_url=BASE_URL) as client:
        assert client.get("/", follow_redirects=False).status_code == 200
        assert client.get("/admin/audit").status_code == 200


def test_login_required_without_accounts_refuses_everyone() -> None:
    with TestClient(create_app(Settings(login_required=True), temp_store()), base_url=BASE_URL) as client:
        assert client.get("/api/conversations").status_code == 401
        assert client.get("/login").status_code == 200


@pytest.fixture(scope="module")
def keys(store: Store) -> dict[str, str]:
    """A key of each scope, made in the store the app serves."""
    return {scope: store.api_keys.create(scope, scope)[1] for scope in ("ingest", "read", "write", "admin")}


def _with_key(client: TestClient[Litestar], key: str, method: str, path: str) -> int:
    client.cookies.clear()
    return client.request(method, path, headers={"authorization": f"Bearer {key}"}, follow_redirects=False).status_code


def test_a_key_acts_with_its_scopes_role(client: TestClient[Litestar], keys: dict[str, str]) -> None:
    assert _with_key(client, keys["read"], "GET", "/api/conversations") == 200
    assert _with_key(client, keys["write"], "GET", "/api/conversations") == 200
    assert _with_key(client, keys["admin"], "GET", "/admin/audit") == 200
    assert _with_key(client, keys["read"], "GET", "/admin/audit") == 403
    assert _with_key(client, keys["write"], "GET", "/admin/audit") == 403


def test_an_ingest_key_or_a_made_up_one_opens_nothing_but_ingest(
    client: TestClient[Litestar], keys: dict[str, str]
) -> None:
    assert _with_key(client, keys["ingest"], "GET", "/api/conversations") == 401
    assert _with_key(client, "tlk_" + "x" * 43, "GET", "/api/conversations") == 401


def test_a_revoked_key_is_refused_at_once(store: Store, client: TestClient[Litestar]) -> None:
    record, key = store.api_keys.create("read", "soon revoked")
    assert _with_key(client, key, "GET", "/api/conversations") == 200
    store.api_keys.revoke(record.id)
    assert _with_key(client, key, "GET", "/api/conversations") == 401


def test_a_key_acts_no_higher_than_its_account_and_stops_with_it(store: Store, client: TestClient[Litestar]) -> None:
    accounts = Accounts(store)
    accounts.create("keyholder", Role.REVIEWER, "keyholder password, long enough")
    _, key = store.api_keys.create("admin", "more than its account", user="keyholder")
    assert _with_key(client, key, "GET", "/admin/audit") == 403  # the account's role, not the scope's
    assert _with_key(client, key, "GET", "/api/conversations") == 200
    accounts.set_role("keyholder", Role.VIEWER)
    assert _import_with(client, f"Bearer {key}")[0] == 403  # a demotion takes the key's power at once
    accounts.set_disabled("keyholder", True)
    assert _with_key(client, key, "GET", "/api/conversations") == 401


KEYED_JSONL = b'{"role": "user", "msg_type": "text", "content": "hi", "conversation_id": "k"}\n'
IMPORT_FILE = {"file": ("keyed.jsonl", KEYED_JSONL)}


def _import_with(client: TestClient[Litestar], authorization: str | None) -> tuple[int, str]:
    client.cookies.clear()
    headers = {"authorization": authorization} if authorization is not None else {}
    response = client.post("/import", files=IMPORT_FILE, headers=headers, follow_redirects=False)
    return response.status_code, response.text


def test_a_write_key_posts_without_a_csrf_token(client: TestClient[Litestar], keys: dict[str, str]) -> None:
    # No browser attaches Authorization by itself, so a keyed request cannot be forged cross-site.
    status, text = _import_with(client, f"Bearer {keys['write']}")
    assert status == 200 and "keyed.jsonl" in text


def test_a_read_key_is_refused_by_its_role_not_by_csrf(client: TestClient[Litestar], keys: dict[str, str]) -> None:
    status, text = _import_with(client, f"Bearer {keys['read']}")
    assert status == 403 and "reviewer role" in text and "CSRF" not in text


@pytest.mark.parametrize("authorization", [None, "Bearer tlk_" + "x" * 43], ids=["no key", "made-up key"])
def test_without_a_valid_key_a_post_still_needs_the_csrf_token(
    client: TestClient[Litestar], cookies: dict[Role | None, dict[str, str]], authorization: str | None
) -> None:
    client.cookies.clear()
    client.cookies.update(cookies[Role.REVIEWER])  # a reviewer's session, so only the token is missing
    headers = {"authorization": authorization} if authorization is not None else {}
    # A form without files: Litestar's CSRF check parses the form and leaves uploaded files to the collector.
    response = client.post("/import", data={"note": "forged"}, headers=headers, follow_redirects=False)
    assert response.status_code == 403 and "CSRF" in response.text
