"""Every route declares what it needs, and the guard holds it: the route-by-role matrix, on both backends.

The route table of the app is walked, so a new route that forgets its ``opt=needs(...)`` fails here (shown with a
toy controller), and every route is requested as anonymous, viewer, reviewer and admin, and with an API key of each
scope. A refusal must be the guard's (401 or a redirect to the login page; 403 naming the role needed); anything
else means the request got past the guard. Every state-changing route refuses a session without its CSRF token.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core.accounts import Accounts, Role
from core.store import Store
from tests.store.store_pg import BACKENDS, empty_store_url
from tests.web.accounts_data import add_accounts, csrf_token, log_in
from tests.web.web_corpus import BASE_URL, csrf_cookie, make_app, temp_store
from web.app import create_app
from web.auth.access import OWN_KEY, PUBLIC, Access, declared, needs
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


def test_the_walk_fails_on_a_new_route_that_forgets_its_role(monkeypatch: pytest.MonkeyPatch) -> None:
    from litestar import Controller, get, post

    from web import app as web_app

    class Forgetful(Controller):
        path = "/forgetful"

        @get("/", sync_to_thread=False)
        def page(self) -> str:
            return "reached"

        @post("/", sync_to_thread=False, opt=needs(Role.REVIEWER))
        def change(self) -> str:
            return "changed"

    monkeypatch.setattr(web_app, "PAGE_ROUTES", [*web_app.PAGE_ROUTES, Forgetful])
    with pytest.raises(AssertionError) as failed:
        test_every_route_declares_what_it_needs(create_app(Settings(), temp_store()))
    assert "GET /forgetful" in str(failed.value) and "POST /forgetful" not in str(failed.value)


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


@dataclass(frozen=True)
class Caller:
    """Who asks in the matrix: a browser's session (or none), or a program's API key of one scope."""

    label: str
    role: Role | None  # what the guard lets it do; None: nothing that needs a role
    cookies: dict[str, str]
    headers: dict[str, str]
    opens_ingest: bool = False  # its key is one the OTLP route (OWN_KEY) takes


KEY_ROLES: dict[str, Role | None] = {"ingest": None, "read": Role.VIEWER, "write": Role.REVIEWER, "admin": Role.ADMIN}
"""The role a key of each scope acts with, as the README's table says (an ingest key: none)."""


@pytest.fixture(scope="module")
def callers(cookies: dict[Role | None, dict[str, str]], keys: dict[str, str]) -> list[Caller]:
    """Anonymous and each role's session (with the CSRF token a browser's form carries), then each key scope's
    program: a key and nothing else, so a state-changing request shows that a valid key needs no CSRF token.
    An ingest key opens no route but its own, so it carries the anonymous browser's token, to reach the guard."""
    made = [
        Caller(role.value if role else "anonymous", role, held, {"x-csrftoken": csrf_cookie(held)})
        for role, held in cookies.items()
    ]
    for scope, role in KEY_ROLES.items():
        held = cookies[ANONYMOUS] if role is None else {}
        token = {"x-csrftoken": csrf_cookie(held)} if held else {}
        made.append(
            Caller(f"{scope} key", role, held, {"authorization": f"Bearer {keys[scope]}", **token},
                   opens_ingest=scope in ("ingest", "admin"))
        )  # fmt: skip
    return made


def _request(client: TestClient[Litestar], caller: Caller, method: str, path: str) -> tuple[int, str, str]:
    url = _PARAM.sub(lambda m: SAMPLE.get(m[1], "nobody-has-this"), path)
    client.cookies.clear()
    client.cookies.update(caller.cookies)
    response = client.request(method, url, headers=caller.headers, follow_redirects=False)
    return response.status_code, response.headers.get("location", ""), response.text


def _guard_refused(status: int, location: str, text: str) -> bool:
    """The guard's own refusals: a login first (a redirect to the form, or 401), or a role too low (403)."""
    return (
        (status == 303 and location.startswith("/login?next="))
        or (status == 401 and "Log in to use this dashboard" in text)
        or (status == 403 and "role" in text)
    )


def _wrong(access: Access, caller: Caller, method: str, path: str, answer: tuple[int, str, str]) -> str | None:
    """What is wrong with ``answer`` to ``caller`` on a route that needs ``access`` (None: it is as expected)."""
    status, location, text = answer
    if access == OWN_KEY:  # past the guard, the handler checks its own key: 401 without one of its scopes
        if caller.opens_ingest:
            return None if status != 401 and not _guard_refused(*answer) else "expected the route to take its key"
        return None if status == 401 and not _guard_refused(*answer) else "expected the route's own 401 for its key"
    if access == PUBLIC or (caller.role is not None and caller.role.allows(access)):
        # 403: not even CSRF may refuse (a session's form carries the token, a key needs none)
        return None if not _guard_refused(*answer) and status != 403 else "expected to pass the guard"
    if caller.role is None:
        sent_to_login = status == 303 and location.startswith("/login?next=")
        expected = sent_to_login if method == "GET" and not path.startswith("/api/") else status == 401
        return None if expected else "expected a login first"
    named = status == 403 and f"needs the {access.value} role" in text
    return None if named else f"expected a refusal naming the {access.value} role"


def test_the_route_by_role_matrix(app: Litestar, client: TestClient[Litestar], callers: list[Caller]) -> None:
    wrong: list[str] = []
    # Logout ends the session every other request uses: it goes last.
    for method, path, access in sorted(_routes(app), key=lambda route: route[1] == "/logout"):
        assert access is not None
        for caller in callers:
            answer = _request(client, caller, method, path)
            problem = _wrong(access, caller, method, path, answer)
            if problem is not None:
                wrong.append(f"{method} {path} as {caller.label}: {answer[0]}, {problem}")
    assert wrong == [], "\n".join(wrong)


STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@pytest.mark.parametrize("token", [None, "forged"], ids=["no token", "forged token"])
def test_every_state_changing_route_refuses_a_session_without_its_csrf_token(
    app: Litestar, client: TestClient[Litestar], cookies: dict[Role | None, dict[str, str]], token: str | None
) -> None:
    # The OTLP route alone is exempt: it takes no cookie, only its key (which no other site can send).
    changing = [(m, p) for m, p, access in _routes(app) if m in STATE_CHANGING and access != OWN_KEY]
    assert len(changing) >= 8
    passed: list[str] = []
    for method, path in changing:
        client.cookies.clear()
        client.cookies.update(cookies[Role.ADMIN])  # the guard would let an admin through
        headers = {"x-csrftoken": token} if token is not None else {}
        url = _PARAM.sub(lambda m: SAMPLE.get(m[1], "nobody-has-this"), path)
        response = client.request(method, url, headers=headers, follow_redirects=False)
        if response.status_code != 403 or "CSRF" not in response.text:
            passed.append(f"{method} {path}: {response.status_code}")
    assert passed == []


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
    assert "a key of scope write" in text and "traceloupe keys create --scope write" in text  # not users set-role


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
