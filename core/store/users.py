"""Accounts in the store: the ``users`` table. Hashes go in and out; passwords never reach this module.

Accounts are never deleted (the audit log names them): an account that must stop is disabled, which
also ends its sessions. A role or password change ends the account's sessions too, so what a
session may do is never older than the account's last change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, Row, delete, exists, insert, select, update

from core.accounts.roles import Role
from core.errors import MisuseError, UnknownNameError
from core.messages.base import now_ms
from core.store.account_tables import SESSIONS, USERS
from core.store.engine import read_transaction, write_transaction

_U = USERS.c
MAX_NAME_CHARS = 64


@dataclass(frozen=True, slots=True)
class UserView:
    """An account as the CLI and the dashboard show it: no hash."""

    name: str
    role: Role
    disabled: bool
    created_at: int
    password_changed_at: int


@dataclass(frozen=True, slots=True)
class UserCredentials:
    """An account with its stored hash, for the one caller that checks a password (``core.accounts.logins``)."""

    pk: int
    user: UserView
    password_hash: str


def check_name(name: str) -> None:
    """MisuseError unless ``name`` is 1 to 64 printable characters without spaces."""
    if not 0 < len(name) <= MAX_NAME_CHARS or not name.isprintable() or any(c.isspace() for c in name):
        raise MisuseError(f"an account name is 1 to {MAX_NAME_CHARS} printable characters without spaces")


def create_user(engine: Engine, name: str, role: Role, password_hash: str) -> UserView:
    """Add an account; MisuseError when the name is taken or not a valid name."""
    check_name(name)
    now = now_ms()
    with write_transaction(engine) as conn:
        if conn.execute(select(_U.id).where(_U.name == name)).first() is not None:
            raise MisuseError(f"an account named {name!r} exists already")
        conn.execute(
            insert(USERS).values(
                name=name, role=role.value, password_hash=password_hash, created_at=now, password_changed_at=now
            )
        )
        return _get(conn, name).user


def list_users(engine: Engine) -> list[UserView]:
    """Every account, by name."""
    with read_transaction(engine) as conn:
        return [_view(row) for row in conn.execute(select(USERS).order_by(_U.name))]


def get_user(engine: Engine, name: str) -> UserView:
    """The account called ``name``; UnknownNameError when there is none."""
    with read_transaction(engine) as conn:
        return _get(conn, name).user


def credentials(engine: Engine, name: str) -> UserCredentials | None:
    """The account called ``name`` with its hash, or None when there is none."""
    with read_transaction(engine) as conn:
        try:
            return _get(conn, name)
        except UnknownNameError:
            return None


def any_user(engine: Engine) -> bool:
    """True once any account exists (disabled ones count): from then on every request needs a login."""
    with read_transaction(engine) as conn:
        return bool(conn.execute(select(exists().select_from(USERS))).scalar())


def any_admin(engine: Engine) -> bool:
    """True when an enabled admin account exists: the one who can manage the others."""
    with read_transaction(engine) as conn:
        found = select(_U.id).where(_U.role == Role.ADMIN.value, _U.disabled.is_(False)).limit(1)
        return conn.execute(found).first() is not None


def set_role(engine: Engine, name: str, role: Role) -> UserView:
    """Give the account another role; its sessions end (the next request logs in again)."""
    return _change(engine, name, role=role.value)


def set_disabled(engine: Engine, name: str, disabled: bool) -> UserView:
    """Disable (its sessions end, no login succeeds) or enable an account."""
    return _change(engine, name, disabled=disabled)


def set_password_hash(engine: Engine, name: str, password_hash: str) -> UserView:
    """Replace the account's hash; every session made before now is refused from now on."""
    return _change(engine, name, password_hash=password_hash, password_changed_at=now_ms())


def replace_hash(engine: Engine, pk: int, old_hash: str, new_hash: str) -> None:
    """Store a rehash of the same password (new parameters) unless the hash changed meanwhile; sessions stay."""
    with write_transaction(engine) as conn:
        conn.execute(update(USERS).where(_U.id == pk, _U.password_hash == old_hash).values(password_hash=new_hash))


def _change(engine: Engine, name: str, **values: object) -> UserView:
    with write_transaction(engine) as conn:
        pk = _get(conn, name).pk
        conn.execute(update(USERS).where(_U.id == pk).values(**values))
        conn.execute(delete(SESSIONS).where(SESSIONS.c.user_pk == pk))
        return _get(conn, name).user


def _get(conn: Connection, name: str) -> UserCredentials:
    row = conn.execute(select(USERS).where(_U.name == name)).first()
    if row is None:
        raise UnknownNameError(f"no account {name!r}")
    return UserCredentials(pk=row.id, user=_view(row), password_hash=row.password_hash)


def _view(row: Row[Any]) -> UserView:
    r = row._mapping
    return UserView(
        name=r["name"],
        role=Role(r["role"]),
        disabled=bool(r["disabled"]),
        created_at=r["created_at"],
        password_changed_at=r["password_changed_at"],
    )
