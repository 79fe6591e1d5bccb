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
from typing import Literal

from core.replay.redact import MIN_KEY_CHARS

WireDialect = Literal["openai", "openai-responses", "anthropic", "gemini"]
"""The dialect whose API a send calls and whose answer is read back: a provider's own, or the one it is compatible
with (Zhipu and Doubao speak OpenAI's chat completions at their own base URLs)."""


@dataclass(frozen=True, slots=True)
class ProviderEnv:
    """The environment variables of one provider and the dialect its SDK call speaks."""

    provider: str
    wire_dialect: WireDialect
    key_var: str
    base_url_var: str
    default_base_url: str | None  # None: the SDK's own default


# Documented in the README; Zhipu and Doubao speak OpenAI's chat format at their own base URLs.
PROVIDER_ENV: dict[str, ProviderEnv] = {
    "openai": ProviderEnv("openai", "openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", None),
    "openai-responses": ProviderEnv("openai-responses", "openai-responses", "OPENAI_API_KEY", "OPENAI_BASE_URL", None),
    "anthropic": ProviderEnv("anthropic", "anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", None),
    "gemini": ProviderEnv("gemini", "gemini", "GEMINI_API_KEY", "GEMINI_BASE_URL", None),
    "zhipu": ProviderEnv("zhipu", "openai", "ZHIPU_API_KEY", "ZHIPU_BASE_URL", "https://open.bigmodel.cn/api/paas/v4/"),
    "doubao": ProviderEnv(
        "doubao", "openai", "DOUBAO_API_KEY", "DOUBAO_BASE_URL", "https://ark.cn-beijing.volces.com/api/v3"
    ),
}


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A usable provider: the dialect its SDK call speaks, base URL (None for the SDK default) and key."""

    provider: str
    wire_dialect: WireDialect
    base_url: str | None
    key: str

    def __repr__(self) -> str:  # the key must never reach a log line through a repr
        return (
            f"Endpoint(provider={self.provider!r}, wire_dialect={self.wire_dialect!r}, "
            f"base_url={self.base_url!r}, key=***)"
        )


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether a provider can be replayed now, and if not, which variable to set. Safe to show."""

    provider: str
    available: bool
    key_var: str
    base_url: str | None
    reason: str


def endpoint_for(provider: str, environ: Mapping[str, str] | None = None) -> Endpoint | None:
    """The endpoint for ``provider`` from the environment, or None when its key is not set or too short."""
    env = os.environ if environ is None else environ
    spec = PROVIDER_ENV.get(provider)
    if spec is None:
        return None
    key = env.get(spec.key_var, "").strip()
    if len(key) < MIN_KEY_CHARS:
        return None
    base_url = env.get(spec.base_url_var, "").strip() or spec.default_base_url
    return Endpoint(provider=provider, wire_dialect=spec.wire_dialect, base_url=base_url, key=key)


def availability(environ: Mapping[str, str] | None = None) -> list[Availability]:
    """Every provider with whether its key is set; never includes a key."""
    env = os.environ if environ is None else environ
    out: list[Availability] = []
    for name, spec in PROVIDER_ENV.items():
        endpoint = endpoint_for(name, env)
        base_url = env.get(spec.base_url_var, "").strip() or spec.default_base_url
        reason = "ready" if endpoint is not None else unavailable_reason(name, env)
        out.append(Availability(name, endpoint is not None, spec.key_var, base_url, reason))
    return out


def unavailable_reason(provider: str, environ: Mapping[str, str] | None = None) -> str:
    """One line naming the variable to fix: unset, or set to a key too short to be told apart from text."""
    env = os.environ if environ is None else environ
    spec = PROVIDER_ENV[provider]
    length = len(env.get(spec.key_var, "").strip())
    if length == 0:
        return f"set {spec.key_var} to replay against {provider}"
    return (
        f"{spec.key_var} holds {length} character{'s' * (length != 1)}: a key needs at least {MIN_KEY_CHARS} "
        "(a shorter one cannot be removed from the provider's answers without corrupting them)"
    )
