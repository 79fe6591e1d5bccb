"""Accounts, sessions and the login limit in the store, on both backends: what a login may and may not do."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from core.accounts import Accounts, LoginPolicy, LoginRefused, Role
from core.accounts.tokens import token_id
from core.errors import MisuseError, UnknownNameError
from core.messages.base import now_ms
from core.store import Store
from core.store.account_tables import AUDIT_EVENTS, SESSIONS, USERS
from core.store.sessions import session_user

PASSWORD = "correct horse battery staple"


@pytest.fixture
def accounts(store: Store) -> Accounts:
    found = Accounts(store, LoginPolicy(per_account=3, per_client=4))
    found.create("ada", Role.ADMIN, PASSWORD)
    return found


def _token(accounts: Accounts, name: str = "ada", password: str = PASSWORD, client: str = "10.0.0.1") -> str:
    login = accounts.login(name, password, client)
    assert login.token is not None, login.refused
    return login.token


def test_a_login_gives_a_session_of_the_account_and_its_role(accounts: Accounts) -> None:
    principal = accounts.session(_token(accounts))
    assert principal is not None
    assert (principal.name, principal.role) == ("ada", Role.ADMIN)


def test_neither_the_password_nor_the_token_is_stored(store: Store, accounts: Accounts) -> None:
    token = _token(accounts)
    with store.engine.connect() as conn:
        dump = repr([tuple(r) for t in (USERS, SESSIONS, AUDIT_EVENTS) for r in conn.execute(select(t))])
    assert PASSWORD not in dump
    assert token not in dump
    assert token_id(token) in dump  # the session is there, by its hash
    assert "$argon2id$" in dump


def test_a_wrong_password_and_an_unknown_name_are_refused_alike(accounts: Accounts) -> None:
    wrong = accounts.login("ada", "not the password at all", "10.0.0.2")
    unknown = accounts.login("nobody", PASSWORD, "10.0.0.3")
    assert wrong == unknown
    assert wrong.token is None and wrong.refused is LoginRefused.INVALID


def test_an_unknown_name_is_not_recorded_in_the_log(accounts: Accounts) -> None:
    accounts.login("ada-typed-a-password-here", PASSWORD, "10.0.0.3")
    (event, *_) = accounts.events()
    assert event.action == "login.failed"
    assert event.target is None
    assert "ada-typed" not in repr(accounts.events())


def test_a_session_from_before_a_password_reset_is_refused(accounts: Accounts) -> None:
    token = _token(accounts)
    accounts.reset_password("ada", "a brand new long password")
    assert accounts.session(token) is None
    assert accounts.login("ada", PASSWORD, "10.0.0.1").token is None
    assert accounts.session(_token(accounts, password="a brand new long password")) is not None


def test_a_disabled_account_loses_its_sessions_and_cannot_log_in(accounts: Accounts) -> None:
    token = _token(accounts)
    accounts.set_disabled("ada", True)
    assert accounts.session(token) is None
    assert accounts.login("ada", PASSWORD, "10.0.0.1").refused is LoginRefused.INVALID
    accounts.set_disabled("ada", False)
    assert accounts.session(_token(accounts)) is not None


def test_a_role_change_ends_the_accounts_sessions(accounts: Accounts) -> None:
    token = _token(accounts)
    accounts.set_role("ada", Role.VIEWER)
    assert accounts.session(token) is None
    principal = accounts.session(_token(accounts))
    assert principal is not None and principal.role is Role.VIEWER


def test_logout_ends_the_session(accounts: Accounts) -> None:
    token = _token(accounts)
    accounts.logout(token)
    assert accounts.session(token) is None
    assert [e.action for e in accounts.events()][:2] == ["logout", "login"]


def test_idle_and_absolute_expiry(store: Store, accounts: Accounts) -> None:
    sid = token_id(_token(accounts))
    policy = accounts.policy
    now = now_ms()
    assert session_user(store.engine, sid, now, policy.idle_ms) is not None
    assert session_user(store.engine, sid, now + policy.idle_ms + 1000, policy.idle_ms) is None
    assert session_user(store.engine, sid, now + policy.lifetime_ms + 1000, policy.lifetime_ms * 2) is None


def test_password_spraying_from_one_address_hits_the_limit(accounts: Accounts) -> None:
    for name in ("ada", "bob", "carol", "dan"):  # one guess per account: under the per-account limit
        assert accounts.login(name, "Summer2026!!!", "10.9.9.9").refused is LoginRefused.INVALID
    # The right password from that address is refused now too, without being checked.
    assert accounts.login("ada", PASSWORD, "10.9.9.9").refused is LoginRefused.RATE_LIMITED
    assert accounts.login("ada", PASSWORD, "10.0.0.1").token is not None  # another address is not


def test_guessing_one_account_from_many_addresses_hits_the_limit(accounts: Accounts) -> None:
    for n in range(3):
        assert accounts.login("ada", "guess number one", f"10.1.0.{n}").refused is LoginRefused.INVALID
    assert accounts.login("ada", PASSWORD, "10.1.0.99").refused is LoginRefused.RATE_LIMITED


def test_account_names_and_passwords_are_checked(accounts: Accounts) -> None:
    with pytest.raises(MisuseError, match="exists already"):
        accounts.create("ada", Role.VIEWER, PASSWORD)
    with pytest.raises(MisuseError, match="12 characters"):
        accounts.create("eve", Role.VIEWER, "short")
    with pytest.raises(MisuseError, match="without spaces"):
        accounts.create("two words", Role.VIEWER, PASSWORD)
    with pytest.raises(UnknownNameError):
        accounts.set_role("nobody", Role.ADMIN)
    assert [u.name for u in accounts.users()] == ["ada"]
