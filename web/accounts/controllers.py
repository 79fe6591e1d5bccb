"""Logging in and out, and the admin's page of accounts and the audit log.

- ``GET /login``: the form. ``POST /login`` (CSRF token, same origin like every form): a session cookie
  (HttpOnly, SameSite=Lax, named per store, Secure on HTTPS servers) and a redirect to ``next``; a refusal
  re-renders the form with one sentence for every cause (401).
- ``POST /logout``: the session ends in the store, so no process accepts the cookie again.
- ``GET /admin/audit``: accounts, API keys and the newest events (admin only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import anyio.to_thread
from litestar import Controller, Request, get, post
from litestar.datastructures import Cookie
from litestar.params import QueryParameter
from litestar.response import Redirect, Template

from core.accounts.roles import Role
from web import urls
from web.accounts.pages import REFUSED, AuditPage, LoginPage
from web.auth.access import PUBLIC, needs
from web.auth.principals import GateDep, client_address
from web.deps import FORM

MAX_EVENTS = 500
NextParam = Annotated[str, QueryParameter(max_length=2000)]


@dataclass
class LoginData:
    """The login form's fields."""

    name: str = ""
    password: str = ""
    next: str = urls.INDEX


def local_path(value: str) -> str:
    """``value`` when it is a path of this dashboard, else the index: a login never redirects to another site."""
    if not value.startswith("/") or value.startswith("//") or "\\" in value or any(ord(c) < 0x20 for c in value):
        return urls.INDEX
    return value


class AccountsController(Controller):
    """The login form, logout, and the admin's audit page."""

    include_in_schema = False

    @get(urls.LOGIN, name="login", opt=needs(PUBLIC))
    async def form(self, request: Request[Any, Any, Any], gate: GateDep, next: NextParam = urls.INDEX) -> Template:
        """The login form (saying who is logged in already, if anyone)."""
        principal = await gate.principal_of(request)
        page = LoginPage(next_path=local_path(next), current=principal.name if principal else None)
        return Template("accounts/login.html", context={"page": page})

    @post(urls.LOGIN, name="login-post", status_code=303, opt=needs(PUBLIC))
    async def login(
        self, request: Request[Any, Any, Any], gate: GateDep, data: Annotated[LoginData, FORM]
    ) -> Template | Redirect:
        """Check the name and password; a session and a redirect, or the form again with one refusal for all."""
        client = client_address(request)
        login = await anyio.to_thread.run_sync(gate.accounts.login, data.name, data.password, client)
        target = local_path(data.next)
        if login.token is None:
            # The name is not given back: a password typed into it by mistake must not come back in a page.
            page = LoginPage(next_path=target, error=REFUSED)
            return Template("accounts/login.html", context={"page": page}, status_code=401)
        cookie = Cookie(
            key=gate.cookie_name,
            value=login.token,
            path="/",
            max_age=gate.accounts.policy.lifetime_ms // 1000,
            httponly=True,
            samesite="lax",
            secure=gate.secure_cookies,
        )
        return Redirect(target, status_code=303, cookies=[cookie])

    @post(urls.LOGOUT, name="logout", status_code=303, opt=needs(PUBLIC))
    async def logout(self, request: Request[Any, Any, Any], gate: GateDep) -> Redirect:
        """End the session in the store and forget the cookie."""
        token = request.cookies.get(gate.cookie_name)
        if token:
            await anyio.to_thread.run_sync(lambda: gate.accounts.logout(token, client=client_address(request)))
        response = Redirect(urls.LOGIN, status_code=303)
        response.delete_cookie(gate.cookie_name, path="/")
        return response

    @get(urls.AUDIT, name="audit", opt=needs(Role.ADMIN), sync_to_thread=True)
    def audit(self, gate: GateDep, user: Annotated[str | None, QueryParameter(max_length=64)] = None) -> Template:
        """The accounts, the API keys with their last use, and the newest events of the audit log."""
        accounts = gate.accounts
        page = AuditPage(
            users=accounts.users(),
            keys=gate.keys.list(user=user),
            events=accounts.events(actor=user, limit=MAX_EVENTS),
            actor=user,
        )
        return Template("accounts/audit.html", context={"page": page})
