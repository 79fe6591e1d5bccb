"""How long a login lasts and how many failed ones are allowed: one frozen object, set by the server's owner."""

from __future__ import annotations

from dataclasses import dataclass

MINUTE_MS = 60_000
HOUR_MS = 60 * MINUTE_MS


@dataclass(frozen=True, slots=True)
class LoginPolicy:
    """Session lifetimes and the login rate limit.

    A session ends ``idle_ms`` after its last request or ``lifetime_ms`` after the login, whichever
    comes first; its last use is written at most once per ``touch_every_ms``. Within ``window_ms``, an
    account takes at most ``per_account`` failed logins and a client address ``per_client`` (password
    spraying: one address, many accounts); past either, logins are refused without checking the password.
    """

    idle_ms: int = 8 * HOUR_MS
    lifetime_ms: int = 7 * 24 * HOUR_MS
    touch_every_ms: int = MINUTE_MS
    window_ms: int = 15 * MINUTE_MS
    per_account: int = 5
    per_client: int = 20

    def __post_init__(self) -> None:
        if min(self.idle_ms, self.lifetime_ms, self.window_ms, self.per_account, self.per_client) < 1:
            raise ValueError("login limits and lifetimes must be positive")
        if self.touch_every_ms < 0 or self.touch_every_ms >= self.idle_ms:
            raise ValueError("touch_every_ms must be under idle_ms")
