"""Where each provider is reached and with which key: the environment, and nothing else.

A key is read from its variable at the moment of sending and handed to the SDK
client; it is never returned by anything here except ``Endpoint.key`` itself, never
stored, never put in an error. A base URL comes from the environment too, never from
a trace or a request (a stored ``base_url`` would otherwise receive the operator's key).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from core.providers import Dialect, all_providers
from core.providers.wire import Wire
from core.replay.redact import MIN_KEY_CHARS


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A usable provider: the provider (its wire is what the send speaks), base URL (None: the SDK's) and key."""

    provider: Dialect
    base_url: str | None
    key: str

    @property
    def wire(self) -> Wire:
        """The API the send calls and whose answer is read back."""
        return self.provider.wire

    def __repr__(self) -> str:  # the key must never reach a log line through a repr
        return (
            f"Endpoint(provider={self.provider.name!r}, wire={self.wire.name!r}, base_url={self.base_url!r}, key=***)"
        )


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether a provider can be replayed now, and if not, which variable to set. Safe to show."""

    provider: Dialect
    available: bool
    key_var: str
    base_url: str | None
    reason: str


def base_url_of(provider: Dialect, environ: Mapping[str, str]) -> str | None:
    """The provider's base URL: its variable when set, else its default (None: the SDK's own)."""
    return environ.get(provider.base_url_var, "").strip() or provider.default_base_url


def endpoint_for(provider: Dialect, environ: Mapping[str, str] | None = None) -> Endpoint | None:
    """The endpoint for ``provider`` from the environment, or None when its key is not set or too short."""
    env = os.environ if environ is None else environ
    key = env.get(provider.key_var, "").strip()
    if len(key) < MIN_KEY_CHARS:
        return None
    return Endpoint(provider=provider, base_url=base_url_of(provider, env), key=key)


def availability(environ: Mapping[str, str] | None = None) -> list[Availability]:
    """Every provider with whether its key is set; never includes a key."""
    env = os.environ if environ is None else environ
    out: list[Availability] = []
    for provider in all_providers():
        endpoint = endpoint_for(provider, env)
        reason = "ready" if endpoint is not None else unavailable_reason(provider, env)
        out.append(Availability(provider, endpoint is not None, provider.key_var, base_url_of(provider, env), reason))
    return out


def unavailable_reason(provider: Dialect, environ: Mapping[str, str] | None = None) -> str:
    """One line naming the variable to fix: unset, or set to a key too short to be told apart from text."""
    env = os.environ if environ is None else environ
    length = len(env.get(provider.key_var, "").strip())
    if length == 0:
        return f"set {provider.key_var} to replay against {provider.name}"
    return (
        f"{provider.key_var} holds {length} character{'s' * (length != 1)}: a key needs at least {MIN_KEY_CHARS} "
        "(a shorter one cannot be removed from the provider's answers without corrupting them)"
    )
