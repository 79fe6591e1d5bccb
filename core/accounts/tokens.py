"""Session tokens: random for the cookie, SHA-256 for the store, so a copy of the database logs nobody in."""

from __future__ import annotations

import hashlib
import secrets

TOKEN_BYTES = 32


def new_token() -> str:
    """A fresh session token (256 random bits, URL-safe text): what the browser's cookie holds."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_id(token: str) -> str:
    """What the store keys a session by: the token's SHA-256, in hex."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
