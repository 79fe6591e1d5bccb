"""Passwords as Argon2id hashes: made, checked, never kept in clear.

The parameters are OWASP's first Argon2id choice (Password Storage Cheat Sheet: 19 MiB, 2 passes, 1 lane)
rather than argon2-cffi's default 64 MiB: every login attempt costs the server that memory, and attempts
come concurrently from any number of clients before the rate limit can count them.
"""

from __future__ import annotations

from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from core.errors import MisuseError

MIN_PASSWORD_CHARS = 12
MAX_PASSWORD_CHARS = 1024
"""Longer is refused before hashing: a megabyte of password would cost every login attempt its hashing time."""

_HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


@cache
def unknown_account_hash() -> str:
    """Checked against when no account has the name given, so a login's time does not say whether the name exists."""
    return _HASHER.hash("no account has this password: it only makes a failed lookup take as long")


def check_new_password(password: str) -> None:
    """MisuseError when ``password`` cannot be an account's password (too short, too long, only spaces)."""
    if len(password) < MIN_PASSWORD_CHARS or not password.strip():
        raise MisuseError(f"a password is at least {MIN_PASSWORD_CHARS} characters")
    if len(password) > MAX_PASSWORD_CHARS:
        raise MisuseError(f"a password is at most {MAX_PASSWORD_CHARS} characters")


def hash_password(password: str) -> str:
    """The Argon2id hash (PHC string, salt included) of a new password, after ``check_new_password``."""
    check_new_password(password)
    return _HASHER.hash(password)


def password_matches(stored_hash: str, password: str) -> bool:
    """True when ``password`` is the one ``stored_hash`` was made from; False for any mismatch or bad hash."""
    if len(password) > MAX_PASSWORD_CHARS:
        return False
    try:
        return _HASHER.verify(stored_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(stored_hash: str) -> bool:
    """True when the hash was made with other parameters than today's (it is remade at the next login)."""
    return _HASHER.check_needs_rehash(stored_hash)
