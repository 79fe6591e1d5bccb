"""API keys: shown once, stored as their hash, refused once revoked or expired, scoped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from core.errors import InputError, UnknownNameError
from core.store import Store
from core.store.api_keys import KEY_PREFIX, find_key, key_hash
from core.store.engine import read_transaction
from core.store.ingest_tables import API_KEYS


def test_a_key_is_shown_once_and_only_its_hash_is_stored(store: Store) -> None:
    record, plaintext = store.api_keys.create("ingest", "ci agent")
    assert plaintext.startswith(KEY_PREFIX) and len(plaintext) >= 40
    assert plaintext.startswith(record.prefix) and len(record.prefix) < len(plaintext) // 3
    with read_transaction(store.engine) as conn:
        rows = [tuple(str(v) for v in row) for row in conn.execute(select(API_KEYS))]
    assert not any(plaintext in value for row in rows for value in row)
    assert any(key_hash(plaintext) in row for row in rows)
    assert plaintext not in repr(record) and plaintext not in repr(store.api_keys.list())


def test_verify_takes_the_key_for_its_scope_and_records_its_use(store: Store) -> None:
    record, plaintext = store.api_keys.create("ingest")
    found = store.api_keys.verify(plaintext, "ingest")
    assert found is not None and found.id == record.id
    assert store.api_keys.get(record.id).last_used_at is not None
    assert store.api_keys.verify(plaintext, "read") is None
    assert store.api_keys.verify(plaintext + "x", "ingest") is None
    assert store.api_keys.verify(plaintext[:-1], "ingest") is None
    assert store.api_keys.verify("", "ingest") is None


def test_an_admin_key_grants_every_scope_and_a_write_key_reading(store: Store) -> None:
    _, admin = store.api_keys.create("admin")
    _, writer = store.api_keys.create("write", user="ana")
    assert all(store.api_keys.verify(admin, scope) is not None for scope in ("ingest", "read", "write", "admin"))
    assert store.api_keys.verify(writer, "read") is not None and store.api_keys.verify(writer, "ingest") is None
    assert [r.user_name for r in store.api_keys.list(user="ana")] == ["ana"]


def test_a_revoked_key_stops_working_and_stays_listed(store: Store) -> None:
    record, plaintext = store.api_keys.create("ingest", "old")
    assert store.api_keys.revoke(record.id) is True
    assert store.api_keys.revoke(record.id) is False
    assert store.api_keys.verify(plaintext, "ingest") is None
    assert [r.revoked_at is not None for r in store.api_keys.list()] == [True]
    assert store.api_keys.list(include_revoked=False) == []
    with pytest.raises(UnknownNameError):
        store.api_keys.revoke(record.id + 100)


def test_an_expired_key_stops_working(store: Store) -> None:
    soon = datetime.now(UTC) + timedelta(milliseconds=50)
    record, plaintext = store.api_keys.create("ingest", expires=soon)
    assert record.active(record.created_at)
    assert not record.active(record.expires_at or 0)
    past_expiry = int((soon + timedelta(seconds=1)).timestamp() * 1000)
    assert store.api_keys.get(record.id).active(past_expiry) is False
    with read_transaction(store.engine) as conn:
        assert find_key(conn, plaintext, "ingest", past_expiry) is None
        assert find_key(conn, plaintext, "ingest", record.created_at) is not None
    with pytest.raises(InputError):
        store.api_keys.create("ingest", expires=datetime.now(UTC) - timedelta(days=1))
    with pytest.raises(InputError):
        store.api_keys.create("owner")  # type: ignore[arg-type]  # a scope the type forbids, refused at run time too
