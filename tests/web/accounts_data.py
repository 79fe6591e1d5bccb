"""Accounts for the dashboard tests: a store with one account of each role, and a client logged in as one."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import TestClient

from core.accounts import Accounts, Role
from core.store import Store
from tests.web.web_corpus import csrf_cookie

PASSWORDS: dict[Role, str] = {
    Role.VIEWER: "viewer password, long enough",
    Role.REVIEWER: "reviewer password, long enough",
    Role.ADMIN: "admin password, long enough",
}
"""Account ``role.value`` (``viewer``, ``reviewer``, ``admin``) has this password."""


def add_accounts(store: Store) -> Accounts:
    """One account per role, named after it."""
    accounts = Accounts(store)
    for role, password in PASSWORDS.items():
        accounts.create(role.value, role, password)
    return accounts


def csrf_token(client: TestClient[Litestar]) -> str:
    """The client's CSRF token, fetched from the (public) login page when it has none yet."""
    response = client.get("/login")
    assert response.status_code == 200
    return csrf_cookie(client.cookies)


def log_in(client: TestClient[Litestar], role: Role, password: str | None = None) -> int:
    """Post the login form as the account of ``role``; the response status (303 when it worked)."""
    data = {"name": role.value, "password": password or PASSWORDS[role], "_csrf_token": csrf_token(client)}
    return client.post("/login", data=data, follow_redirects=False).status_code
