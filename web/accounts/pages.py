"""The accounts slice's page contexts: the login form and the admin's audit page."""

from __future__ import annotations

from dataclasses import dataclass

from core.store.api_keys import KeyRecord
from core.store.audit import AuditEvent
from core.store.users import UserView

REFUSED = "Login failed: the name or password is wrong, or there were too many attempts; try again later."
"""The one answer to every failed login: it says nothing of which part was wrong."""


@dataclass(frozen=True, slots=True)
class LoginPage:
    """The login form: where to go after it, who is logged in already (None: nobody), and a refusal to show."""

    next_path: str
    current: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class AuditPage:
    """The accounts, the API keys (never a key: its shown prefix) and the newest events of the audit log
    (``actor``: only that account's events and keys)."""

    users: list[UserView]
    keys: list[KeyRecord]
    events: list[AuditEvent]
    actor: str | None
