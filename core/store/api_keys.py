"""API keys: made once and shown once, stored as their SHA-256 only, checked in constant time.

::

    keys = ApiKeys(store.engine)                 # or store.api_keys
    record, plaintext = keys.create("ingest", "ci agent", user=None, expires=None)
    keys.verify(plaintext, "ingest")             # KeyRecord, or None (unknown, revoked, expired, wrong scope)
    keys.list()                                  # KeyRecords, never a key
    keys.revoke(record.id)                       # True when it was active

A key is ``tlk_`` and 256 random bits (URL-safe base64): a plain SHA-256 is enough to store it, there is no
password to brute-force. A ``KeyRecord`` never holds the key nor its hash, so no repr or log line can leak
them; the plaintext is returned once, by ``create``, and nothing here logs it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

from sqlalchemy import Connection, Engine, insert, select, update

from core.errors import InputError, UnknownNameError
from core.messages.base import now_ms
from core.store.audit import AuditEvent, record_in
from core.store.engine import read_transaction, write_transaction
from core.store.ingest_tables import API_KEYS

Scope = Literal["ingest", "read", "write", "admin"]
"""What a key may do: send spans, read the store, change it, administer accounts and keys."""
SCOPES: tuple[Scope, ...] = get_args(Scope)

GRANTS: dict[Scope, frozenset[Scope]] = {
    "ingest": frozenset({"ingest"}),
    "read": frozenset({"read"}),
    "write": frozenset({"read", "write"}),
    "admin": frozenset(SCOPES),
}
"""The scopes a key of each scope passes ``verify`` for: writing includes reading, admin everything."""

KEY_PREFIX = "tlk_"
KEY_BYTES = 32
SHOWN_CHARS = len(KEY_PREFIX) + 8
"""How much of a key a listing shows: 48 bits, enough to tell keys apart, far from enough to guess the rest."""
LAST_USED_EVERY_MS = 60_000
"""``last_used_at`` is written at most once a minute per key: a busy exporter must not turn every request into a
write of the key's row."""
MAX_NAME_CHARS = 200
KEY_CREATED, KEY_REVOKED = "key.create", "key.revoke"
"""The audit log's actions for key changes, recorded in the change's transaction (never the key, only its prefix)."""

_K = API_KEYS.c


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """A stored key as everyone may see it: its id, name, scope, shown prefix, account and times (ms since epoch)."""

    id: int
    name: str
    scope: Scope
    prefix: str
    user_name: str | None
    created_at: int
    expires_at: int | None
    last_used_at: int | None
    revoked_at: int | None

    def active(self, now: int) -> bool:
        """Neither revoked nor expired at ``now``."""
        return self.revoked_at is None and (self.expires_at is None or now < self.expires_at)


def key_hash(token: str) -> str:
    """The SHA-256 (hex) a key is stored as."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_key() -> str:
    """A fresh key: ``tlk_`` and 256 random bits."""
    return KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)


def _record(row: Any) -> KeyRecord:
    m = row._mapping
    return KeyRecord(
        id=m["id"],
        name=m["name"],
        scope=m["scope"],
        prefix=m["prefix"],
        user_name=m["user_name"],
        created_at=m["created_at"],
        expires_at=m["expires_at"],
        last_used_at=m["last_used_at"],
        revoked_at=m["revoked_at"],
    )


_RECORD_COLUMNS = (
    _K.id, _K.name, _K.scope, _K.prefix, _K.user_name, _K.created_at, _K.expires_at, _K.last_used_at, _K.revoked_at,
)  # fmt: skip


def _ms(when: datetime | int | None) -> int | None:
    if when is None or isinstance(when, int):
        return when
    if when.tzinfo is None:
        raise InputError("an expiry time needs a time zone (UTC is assumed nowhere)")
    return int(when.timestamp() * 1000)


def create_key(
    conn: Connection,
    scope: Scope,
    name: str = "",
    *,
    user: str | None = None,
    expires: datetime | int | None = None,
    now: int | None = None,
) -> tuple[KeyRecord, str]:
    """Store a new key; its record and the key itself, which is never stored or shown again."""
    if scope not in SCOPES:
        raise InputError(f"unknown key scope {scope!r}; scopes: {', '.join(SCOPES)}")
    if len(name) > MAX_NAME_CHARS:
        raise InputError(f"a key's name is at most {MAX_NAME_CHARS} characters")
    created = now_ms() if now is None else now
    expires_at = _ms(expires)
    if expires_at is not None and expires_at <= created:
        raise InputError("the expiry time is already past")
    token = new_key()
    values = {
        "name": name,
        "scope": scope,
        "key_hash": key_hash(token),
        "prefix": token[:SHOWN_CHARS],
        "user_name": user,
        "created_at": created,
        "expires_at": expires_at,
    }
    row = conn.execute(insert(API_KEYS).values(values).returning(*_RECORD_COLUMNS)).one()
    return _record(row), token


def find_key(conn: Connection, token: str, scope: Scope, now: int) -> KeyRecord | None:
    """The active key ``token`` is, if it grants ``scope``; None for anything else (the reason is not told)."""
    if not token.startswith(KEY_PREFIX) or len(token) > 256:
        return None
    wanted = key_hash(token)
    row = conn.execute(select(_K.key_hash, *_RECORD_COLUMNS).where(_K.key_hash == wanted)).first()
    if row is None or not hmac.compare_digest(row.key_hash, wanted):
        return None
    record = _record(row)
    if not record.active(now) or scope not in GRANTS.get(record.scope, frozenset()):
        return None
    return record


class ApiKeys:
    """The store's keys; each method is one transaction."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(
        self,
        scope: Scope,
        name: str = "",
        *,
        user: str | None = None,
        expires: datetime | int | None = None,
        by: str | None = None,
        client: str | None = None,
    ) -> tuple[KeyRecord, str]:
        """A new key: its record, and the key itself (shown this once; only its hash is stored). The audit log
        records it (``key.create``, done ``by`` an account from ``client``).

        ``expires``: an aware datetime or milliseconds since the epoch; InputError for an unknown scope, a past
        expiry or a name over 200 characters.
        """
        with write_transaction(self.engine) as conn:
            record, token = create_key(conn, scope, name, user=user, expires=expires)
            _audit(conn, KEY_CREATED, record, by, client)
            return record, token

    def verify(self, token: str, scope: Scope) -> KeyRecord | None:
        """The key ``token`` is when it is active and grants ``scope`` (``GRANTS``); None otherwise. Records its use."""
        now = now_ms()
        with read_transaction(self.engine) as conn:
            record = find_key(conn, token, scope, now)
        if record is None:
            return None
        if record.last_used_at is None or now - record.last_used_at >= LAST_USED_EVERY_MS:
            with write_transaction(self.engine) as conn:
                conn.execute(update(API_KEYS).where(_K.id == record.id).values(last_used_at=now))
        return record

    def list(self, *, user: str | None = None, include_revoked: bool = True) -> list[KeyRecord]:
        """Every key (of one account when ``user`` is given), oldest first; never the key nor its hash."""
        stmt = select(*_RECORD_COLUMNS).order_by(_K.id)
        if user is not None:
            stmt = stmt.where(_K.user_name == user)
        if not include_revoked:
            stmt = stmt.where(_K.revoked_at.is_(None))
        with read_transaction(self.engine) as conn:
            return [_record(row) for row in conn.execute(stmt)]

    def get(self, key_id: int) -> KeyRecord:
        """One key's record; UnknownNameError when there is none."""
        with read_transaction(self.engine) as conn:
            row = conn.execute(select(*_RECORD_COLUMNS).where(_K.id == key_id)).first()
        if row is None:
            raise UnknownNameError(f"no key with id {key_id}")
        return _record(row)

    def revoke(self, key_id: int, *, by: str | None = None, client: str | None = None) -> bool:
        """Revoke a key from now on; True when it was not revoked yet (the audit log then records ``key.revoke``).
        UnknownNameError when there is none."""
        with write_transaction(self.engine) as conn:
            done = conn.execute(
                update(API_KEYS)
                .where(_K.id == key_id, _K.revoked_at.is_(None))
                .values(revoked_at=now_ms())
                .returning(*_RECORD_COLUMNS)
            ).first()
            if done is None and conn.execute(select(_K.id).where(_K.id == key_id)).first() is None:
                raise UnknownNameError(f"no key with id {key_id}")
            if done is not None:
                _audit(conn, KEY_REVOKED, _record(done), by, client)
        return done is not None


def _audit(conn: Connection, action: str, record: KeyRecord, by: str | None, client: str | None) -> None:
    """A key change in the audit log: the key's id as target, what tells it apart as detail (never the key)."""
    detail = {"scope": record.scope, "name": record.name, "prefix": record.prefix, "user": record.user_name}
    at = record.revoked_at if record.revoked_at is not None else record.created_at
    record_in(conn, AuditEvent(at=at, actor=by, action=action, target=f"key {record.id}", detail=detail, client=client))
