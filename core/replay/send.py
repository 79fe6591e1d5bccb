"""Send one request body through the provider's official SDK and capture what came back.

Every outcome is a value, never an exception: a reply, an HTTP error with the
provider's body, a rate limit with its retry-after, a timeout, a refused connection,
an answer that is not JSON. The key goes to the SDK client and nowhere else; error
texts are redacted before they are cut to length and before they leave this module.

The clients are kept for the process and follow no redirect (``core.replay.clients``):
a 3xx is recorded instead.
"""

from __future__ import annotations

import functools
import json
import time
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from core.providers.wire import ErrorTable, Status, Wire
from core.replay.clients import CLIENTS
from core.replay.endpoints import Endpoint
from core.replay.redact import IN_FLIGHT, MIN_KEY_CHARS, Redactor
from core.sdk_imports import import_sdk

ERROR_DETAIL_CHARS = 300
STORED_TEXT_CHARS = 10_000
RETRY_AFTER_CHARS = 40

# What a failure outside any SDK table stands for: the request read back into the SDK's types (ValueError, TypeError)
# or a socket error that escaped unwrapped.
OTHER_ERRORS: ErrorTable = {
    TimeoutError: "timeout",
    OSError: "connection_error",
    ValueError: "malformed",
    TypeError: "malformed",
}


@functools.cache
def error_table(wire: Wire) -> ErrorTable:
    """The exception table of a wire's SDK, over the errors any send may meet."""
    return {**OTHER_ERRORS, **wire.errors()}


def outcome_of(exc: BaseException, table: ErrorTable) -> Status | None:
    """The outcome of the most specific type of ``exc`` the table names; None when it names none."""
    for cls in type(exc).__mro__:
        outcome = table.get(cls)
        if outcome is not None:
            return outcome
    return None


@dataclass(frozen=True, slots=True)
class Exchange:
    """What one send produced. ``response`` is the parsed JSON body when there was one."""

    status: Status
    latency_ms: int
    http_status: int | None = None
    response: Any = None
    response_text: str | None = None
    error: str | None = None
    retry_after: str | None = None


class Sender(Protocol):
    """What sends a body: :func:`send` itself, or a queue's wrapper around it (a concurrency slot, 429 waits)."""

    def __call__(self, endpoint: Endpoint, model: str, body: dict[str, Any], *, timeout: float = ...) -> Exchange: ...


def send(endpoint: Endpoint, model: str, body: dict[str, Any], *, timeout: float = 60.0) -> Exchange:
    """POST ``body`` for ``model`` to the endpoint through its SDK (no retries) and classify the result."""
    started = time.perf_counter()
    if len(endpoint.key) < MIN_KEY_CHARS:  # endpoint_for never builds one; a hand-made Endpoint could
        return Exchange("refused", 0, error=f"a key needs at least {MIN_KEY_CHARS} characters; nothing was sent")
    try:
        import_sdk(endpoint.wire.sdk_module)  # its loggers exist before keep_out looks for them
        with IN_FLIGHT.keep_out(endpoint.key, endpoint.wire.logger):
            status_code, text, headers = _dispatch(endpoint, model, body, timeout)
    except Exception as exc:  # every SDK failure becomes a recorded outcome, by design
        return _failure(endpoint, exc, _ms(started))
    latency = _ms(started)
    if status_code >= 400:
        return _http_error(endpoint, status_code, text, headers, latency)
    try:
        parsed = json.loads(text)
    except ValueError:
        return Exchange(
            "malformed", latency, status_code, None, Redactor(endpoint.key).clip(text, STORED_TEXT_CHARS),
            error="the provider's answer is not JSON",
        )  # fmt: skip
    return Exchange("ok", latency, status_code, parsed, None)


def _dispatch(endpoint: Endpoint, model: str, body: dict[str, Any], timeout: float) -> tuple[int, str, dict[str, str]]:
    """The SDK call of the endpoint's wire: (HTTP status, body text, headers)."""
    with CLIENTS.client(endpoint, timeout) as client:
        return endpoint.wire.call(client, model, body)


def _http_error(endpoint: Endpoint, status_code: int, text: str, headers: dict[str, str], latency: int) -> Exchange:
    redactor = Redactor(endpoint.key)
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = None
    lowered = {k.lower(): v for k, v in headers.items()}
    if 300 <= status_code < 400:
        return _redirect(redactor, status_code, lowered.get("location"), latency)
    detail = redactor.clip(_error_detail(parsed) or text, ERROR_DETAIL_CHARS)
    stored = redactor.clip(text, STORED_TEXT_CHARS)
    retry_after = lowered.get("retry-after")
    if retry_after is not None:
        retry_after = redactor.clip(" ".join(retry_after.split()), RETRY_AFTER_CHARS)
    if status_code == 429:
        wait = f"; the provider asks to retry after {retry_after} s" if retry_after else ""
        return Exchange(
            "rate_limited", latency, 429, parsed, stored,
            error=f"rate limited (HTTP 429): {detail}{wait}", retry_after=retry_after,
        )  # fmt: skip
    return Exchange(
        "http_error", latency, status_code, parsed, stored,
        error=f"the provider answered HTTP {status_code}: {detail}",
    )  # fmt: skip


def _redirect(redactor: Redactor, status_code: int, location: str | None, latency: int) -> Exchange:
    """A 3xx is never followed (see the module docstring); the run says where it pointed, origin only."""
    target = "no location"
    if location:
        parts = urlsplit(location)
        target = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}" if parts.netloc else "a path on the same origin"
    error = (
        f"the provider answered HTTP {status_code}, a redirect to {redactor.clip(target, ERROR_DETAIL_CHARS)}; "
        "redirects are not followed, so the request and the key went nowhere else"
    )
    return Exchange("http_error", latency, status_code, None, None, error=error)


def _failure(endpoint: Endpoint, exc: Exception, latency: int) -> Exchange:
    """Classify an SDK exception by its type: the answer it carries, a timeout, a failed connection, unreadable."""
    redactor = Redactor(endpoint.key)
    name = type(exc).__name__
    outcome = outcome_of(exc, error_table(endpoint.wire))
    if outcome in ("http_error", "rate_limited"):
        response = getattr(exc, "response", None)
        status_code = getattr(response, "status_code", None) or getattr(exc, "code", None)
        if isinstance(status_code, int):
            text = getattr(response, "text", None) or json.dumps(getattr(exc, "details", None) or str(exc))
            headers = dict(getattr(response, "headers", {}) or {})
            return _http_error(endpoint, status_code, text if isinstance(text, str) else str(text), headers, latency)
    if outcome == "timeout":
        return Exchange("timeout", latency, error=f"no answer within the time limit ({name})")
    if outcome == "malformed" and isinstance(exc, json.JSONDecodeError):
        return Exchange("malformed", latency, error=f"the provider's answer is not JSON ({exc})")
    if outcome == "malformed":
        return Exchange("malformed", latency, error=redactor.text(f"the exchange could not be read: {name}: {exc}"))
    if outcome == "connection_error":
        return Exchange("connection_error", latency, error=redactor.text(f"could not reach the provider: {exc}"))
    return Exchange("connection_error", latency, error=redactor.text(f"{name}: {exc}"))


def _error_detail(parsed: Any) -> str | None:
    """The message inside each provider's error JSON."""
    if isinstance(parsed, dict):
        error = parsed.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return None


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
