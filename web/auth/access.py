"""What each route needs: every handler declares it in its ``opt`` (``opt=needs(Role.REVIEWER)``), and one guard
(``web.auth.guard``) enforces it. A route that declares nothing is refused, and a test walks the route table."""

from __future__ import annotations

from typing import Any, Final, Literal

from litestar import Controller

from core.accounts.roles import Role

ACCESS_OPT: Final = "access"
"""The ``opt`` key holding what a route needs: a Role, or ``PUBLIC``."""

AUDIT_OPT: Final = "audited_as"
"""The ``opt`` key naming the audit log's action for a route whose success is recorded (``web.auth.audit``)."""

PUBLIC: Final = "public"
"""Open to anyone, logged in or not: the login page and form, logout, the static files."""

OWN_KEY: Final = "own key"
"""Authenticated by the handler itself, with an API key of the route's own scope (OTLP ingest, which programs
call, not browsers): the guard lets it through and the handler answers 401 without such a key."""

Access = Role | Literal["public", "own key"]


def needs(access: Access, *, audited_as: str | None = None) -> dict[str, Any]:
    """The ``opt`` of a route handler or controller that needs ``access``; each success of a route
    ``audited_as`` an action is recorded in the audit log under that name."""
    return {ACCESS_OPT: access} if audited_as is None else {ACCESS_OPT: access, AUDIT_OPT: audited_as}


def declared(opt: dict[str, Any]) -> Access | None:
    """What a handler's merged ``opt`` declares, or None when it declares nothing (refused)."""
    value = opt.get(ACCESS_OPT)
    if value == PUBLIC:
        return PUBLIC
    if value == OWN_KEY:
        return OWN_KEY
    return value if isinstance(value, Role) else None


class PageController(Controller):
    """The dashboard's pages that a viewer may read: pages, not API, so the schema at /schema (which documents /api
    only) leaves them out."""

    opt = needs(Role.VIEWER)
    include_in_schema = False


ACTIONS: dict[Role, str] = {
    Role.VIEWER: "read",
    Role.REVIEWER: "import, replay, or save and run suites",
    Role.ADMIN: "manage accounts and keys",
}
"""What each role adds, in the words a refusal uses."""
