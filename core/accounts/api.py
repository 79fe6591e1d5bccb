"""Accounts, logins and the audit log: what ``traceloupe users``/``audit`` and the dashboard call.

Passwords arrive here and leave only as Argon2id hashes; session tokens leave only as their SHA-256.
A failed login says nothing of why (unknown name, wrong password, disabled account and rate limit
all answer the same way to the caller's caller), and takes as long whether the name exists or not.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from core.accounts import passwords
from core.accounts.policy import LoginPolicy
from core.accounts.roles import Role
from core.accounts.tokens import new_token, token_id
from core.messages.base import now_ms
from core.store import Store, audit, sessions, users
from core.store.audit import LOGIN_FAILED, AuditEvent
from core.store.users import UserView


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request acts for: an account name and its role, and how it proved it (``session`` or ``key``)."""

    name: str
    role: Role
    via: str = "session"


class LoginRefused(enum.Enum):
    """Why a login failed, for the audit log only: the person logging in is told the same for each."""

    INVALID = "invalid"
    RATE_LIMITED = "rate limited"


@dataclass(frozen=True, slots=True)
class Login:
    """A login's outcome: the new session's token (for the cookie, nowhere else), or why it was refused."""

    token: str | None
    refused: LoginRefused | None = None


class Accounts:
    """The accounts of one store, with the server's session and login limits."""

    def __init__(self, store: Store, policy: LoginPolicy | None = None) -> None:
        self.engine = store.engine
        self.policy = policy if policy is not None else LoginPolicy()

    # -- accounts ----------------------------------------------------------

    def create(
        self, name: str, role: Role, password: str, *, by: str | None = None, client: str | None = None
    ) -> UserView:
        """A new account with this password (checked, then hashed)."""
        user = users.create_user(self.engine, name, role, passwords.hash_password(password))
        self.record(by, "user.create", name, {"role": role.value}, client)
        return user

    def users(self) -> list[UserView]:
        """Every account, by name."""
        return users.list_users(self.engine)

    def set_role(self, name: str, role: Role, *, by: str | None = None, client: str | None = None) -> UserView:
        """Give an account another role (its sessions end)."""
        user = users.set_role(self.engine, name, role)
        self.record(by, "user.set-role", name, {"role": role.value}, client)
        return user

    def set_disabled(self, name: str, disabled: bool, *, by: str | None = None, client: str | None = None) -> UserView:
        """Disable an account (its sessions end) or enable it again."""
        user = users.set_disabled(self.engine, name, disabled)
        self.record(by, "user.disable" if disabled else "user.enable", name, None, client)
        return user

    def reset_password(self, name: str, password: str, *, by: str | None = None, client: str | None = None) -> UserView:
        """Give an account a new password; every session made before it is refused."""
        user = users.set_password_hash(self.engine, name, passwords.hash_password(password))
        self.record(by, "user.reset-password", name, None, client)
        return user

    def account(self, name: str) -> UserView | None:
        """The account called ``name``, or None when there is none."""
        found = users.credentials(self.engine, name)
        return found.user if found is not None else None

    def any_user(self) -> bool:
        """True once an account exists: from then on every request needs a login."""
        return users.any_user(self.engine)

    def any_admin(self) -> bool:
        """True when an enabled admin exists."""
        return users.any_admin(self.engine)

    # -- logins and sessions -------------------------------------------------

    def login(self, name: str, password: str, client: str | None) -> Login:
        """Check a name and password (within the rate limit) and start a session; the audit log records either."""
        now = now_ms()
        found = users.credentials(self.engine, name)
        # Only an existing account is named in the log: a password typed into the name field stays unrecorded.
        target = found.user.name if found is not None else None
        of_account, of_client = audit.failures_since(
            self.engine, now - self.policy.window_ms, account=name, client=client
        )
        if of_account >= self.policy.per_account or of_client >= self.policy.per_client:
            self.record(None, LOGIN_FAILED, target, {"reason": LoginRefused.RATE_LIMITED.value}, client, at=now)
            return Login(token=None, refused=LoginRefused.RATE_LIMITED)
        stored = found.password_hash if found is not None else passwords.unknown_account_hash()
        matches = passwords.password_matches(stored, password)
        if found is None or not matches or found.user.disabled:
            self.record(None, LOGIN_FAILED, target, {"reason": LoginRefused.INVALID.value}, client, at=now)
            return Login(token=None, refused=LoginRefused.INVALID)
        if passwords.needs_rehash(stored):
            users.replace_hash(self.engine, found.pk, stored, passwords.hash_password(password))
        token = new_token()
        sessions.start_session(
            self.engine, token_id(token), found.user.name, now, self.policy.lifetime_ms, self.policy.idle_ms
        )
        self.record(found.user.name, "login", found.user.name, None, client, at=now)
        return Login(token=token)

    def session(self, token: str) -> Principal | None:
        """Who a session token logs in, or None when it is unknown, expired, idle too long, or from before a
        password change; a live session's last use is refreshed (at most once per ``touch_every_ms``)."""
        now = now_ms()
        sid = token_id(token)
        found = sessions.session_user(self.engine, sid, now, self.policy.idle_ms)
        if found is None:
            return None
        if now - found.last_seen_at >= self.policy.touch_every_ms:
            sessions.touch_session(self.engine, sid, now)
        return Principal(name=found.name, role=found.role)

    def logout(self, token: str, *, client: str | None = None) -> None:
        """End a session in the store, so no process accepts its cookie again."""
        found = sessions.session_user(self.engine, token_id(token), now_ms(), self.policy.idle_ms)
        if sessions.end_session(self.engine, token_id(token)) and found is not None:
            self.record(found.name, "logout", found.name, None, client)

    # -- the audit log -------------------------------------------------------

    def record(
        self,
        actor: str | None,
        action: str,
        target: str | None = None,
        detail: dict[str, Any] | None = None,
        client: str | None = None,
        *,
        at: int | None = None,
    ) -> None:
        """Append an event to the audit log."""
        event = AuditEvent(at=now_ms() if at is None else at, actor=actor, action=action, target=target,
                           detail=detail, client=client)  # fmt: skip
        audit.record(self.engine, event)

    def events(self, *, since: int | None = None, actor: str | None = None, limit: int = 1000) -> list[AuditEvent]:
        """The audit log, newest first."""
        return audit.list_events(self.engine, since=since, actor=actor, limit=limit)
