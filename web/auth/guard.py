"""The one guard every route passes: what the route declares (``web.auth.access``) against who asks.

- A route that declares nothing is refused (and ``tests/web/test_access.py`` finds it first).
- ``PUBLIC`` routes are open to anyone.
- Without a principal: open while no account exists (a laptop needs no login), else 401 (a page asks for a login).
- With one: its role must allow what the route needs, else 403 saying which role would.
"""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler
from litestar.types import Guard

from core.accounts import Principal
from core.accounts.roles import Role
from web.auth.access import ACTIONS, declared
from web.auth.principals import KEY_ROLES, Gate


class LoginRequired(NotAuthorizedException):
    """No principal, and accounts are on: a browser is sent to the login page, an API client gets 401."""

    def __init__(self) -> None:
        super().__init__(detail="Log in to use this dashboard.")


class RoleRefused(PermissionDeniedException):
    """The principal's role does not allow what the route does; the detail says which role would, and how to get
    it: an account's role is given by an admin, a program needs a key of another scope."""

    def __init__(self, principal: Principal, needed: Role) -> None:
        refused = (
            f"Refused: the {principal.role.value} role cannot {ACTIONS[needed]}; that needs the {needed.value} role"
        )
        if principal.via == "key":
            scope = KEY_SCOPES[needed]
            remedy = f"a key of scope {scope}, of an account with that role: traceloupe keys create --scope {scope}"
        else:
            remedy = f"an admin can give it: traceloupe users set-role {principal.name} {needed.value}"
        super().__init__(detail=f"{refused} ({remedy}).")


KEY_SCOPES: dict[Role, str] = {role: scope for scope, role in KEY_ROLES.items()}
"""The key scope that acts with each role."""


def _litestar_options(handler: BaseRouteHandler) -> bool:
    """Litestar's own answer to OPTIONS (the methods a path takes), which no slice declares."""
    return getattr(handler, "http_methods", None) == {"OPTIONS"}


def access_guard(gate: Gate) -> Guard:
    """The guard of every route of an app serving ``gate``'s accounts."""

    async def guard(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
        needed = declared(dict(handler.opt))
        if needed is None:
            if _litestar_options(handler):
                return
            raise PermissionDeniedException(detail="This address declares no access rule, so it is refused.")
        if not isinstance(needed, Role):  # PUBLIC, or OWN_KEY: the handler checks its own key
            return
        principal = await gate.principal_of(connection)
        if principal is None:
            if await gate.accounts_on():
                raise LoginRequired()
            return
        if not principal.role.allows(needed):
            raise RoleRefused(principal, needed)

    return guard
