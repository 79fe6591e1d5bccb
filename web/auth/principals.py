"""Who a request acts for: the one function that reads a request's credentials.

A session cookie, or an API key (``Authorization: Bearer``) of scope read, write or admin; the guard, the
audit log and the pages all ask ``principal_of``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency
from litestar.params import SkipValidation

from core.accounts import Accounts, Principal
from core.accounts.roles import Role
from core.store.api_keys import ApiKeys, KeyRecord
from core.store.users import UserView

STATE_KEY = "traceloupe.principal"
"""Where a request's principal is kept once found (the scope's state), so it is looked up once per request."""

KEY_ROLES: dict[str, Role] = {"read": Role.VIEWER, "write": Role.REVIEWER, "admin": Role.ADMIN}
"""The role a key of each scope acts with (an ``ingest`` key acts only on the OTLP route, which checks it)."""
BEARER = "bearer "

NO_ACCOUNTS_RECHECK_SECONDS = 1.0
"""While no account exists, that answer is reused this long: an open dashboard asks the store once a second,
not on every request. Once one exists it never stops existing (accounts are disabled, never deleted)."""


@dataclass
class Gate:
    """The accounts of the store the app serves, and how a browser's session is carried.

    ``login_required``: refuse every request without a principal even while no account exists (a server
    started with ``--allow-remote``); else a dashboard with no account is open, as on a laptop.
    """

    accounts: Accounts
    keys: ApiKeys
    cookie_name: str
    secure_cookies: bool = False
    login_required: bool = False
    _accounts_exist: bool = False
    _checked_at: float = float("-inf")

    async def accounts_on(self) -> bool:
        """True when requests need a principal: an account exists, or the server requires logins anyway."""
        if self.login_required or self._accounts_exist:
            return True
        now = time.monotonic()
        if now - self._checked_at >= NO_ACCOUNTS_RECHECK_SECONDS:
            self._accounts_exist = await anyio.to_thread.run_sync(self.accounts.any_user)
            self._checked_at = now
        return self._accounts_exist

    async def principal_of(self, connection: ASGIConnection[Any, Any, Any, Any]) -> Principal | None:
        """The account a request acts for, or None (anonymous): a session cookie, or an API key (``key_principal``)."""
        state = connection.scope.setdefault("state", {})
        if STATE_KEY in state:
            found: Principal | None = state[STATE_KEY]
            return found
        authorization = connection.headers.get("authorization", "")
        if authorization[: len(BEARER)].lower() == BEARER:
            key = authorization[len(BEARER) :].strip()
            principal = await anyio.to_thread.run_sync(self._key_principal, key)
        else:
            token = connection.cookies.get(self.cookie_name)
            principal = await anyio.to_thread.run_sync(self.accounts.session, token) if token else None
        state[STATE_KEY] = principal
        return principal

    def _key_principal(self, token: str) -> Principal | None:
        """Who a key acts for, or None when it is not an active key of a reading scope or better."""
        key = self.keys.verify(token, "read")
        if key is None:
            return None
        if key.user_name is None:
            return Principal(f"key {key.prefix}", KEY_ROLES[key.scope], via="key")
        return key_principal(key, self.accounts.account(key.user_name))


def key_principal(key: KeyRecord, account: UserView | None) -> Principal | None:
    """A key of an account acts under its name, with the lower of its scope's role and the account's: a disabled,
    demoted or missing account takes its keys' power with it, as it ends its sessions."""
    if account is None or account.disabled:
        return None
    role = min(KEY_ROLES[key.scope], account.role, key=lambda r: r.rank)
    return Principal(account.name, role, via="key")


def client_address(connection: ASGIConnection[Any, Any, Any, Any]) -> str | None:
    """The peer's address, as the audit log and the login limit count it (the proxy's, behind one)."""
    return connection.client.host if connection.client is not None else None


GateDep = NamedDependency[SkipValidation[Gate]]
"""The app's gate, for the handlers that log in and out."""


def started_by(request: ASGIConnection[Any, Any, Any, Any]) -> str | None:
    """The name a run started by this request records: its principal's, None on an open dashboard."""
    found = signed_in(request)
    return found.name if found is not None else None


def signed_in(request: ASGIConnection[Any, Any, Any, Any]) -> Principal | None:
    """For the page header: who the guard found this request acts for (None on public pages and open dashboards)."""
    found = request.scope.get("state", {}).get(STATE_KEY)
    return found if isinstance(found, Principal) else None
