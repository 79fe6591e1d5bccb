"""The API a provider's send calls and whose answer is read back: its SDK, its call, its reply and usage readers.

A provider speaks its own wire or one it is compatible with (Zhipu and Doubao speak OpenAI's Chat Completions
at their own base URLs). Each wire is a :class:`Wire` defined in the dialect module of the provider whose SDK it
is; ``core.replay`` sends, classifies failures and reads answers through it, never by the provider's name.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from core.sdk_imports import SDK_IMPORT_LOCK

JSON = dict[str, Any]

Status = Literal["ok", "http_error", "rate_limited", "timeout", "connection_error", "malformed", "refused"]

ErrorTable = Mapping[type[BaseException], Status]
"""An SDK's exception types and the outcome each stands for; the most specific type in an exception's MRO wins.
``http_error`` and ``rate_limited`` carry the provider's answer, whose status decides between them."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider reported them (None where it did not)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class StepUsage:
    """A step's token counts (None where the provider did not report them)."""

    input: int | None = None
    output: int | None = None
    cached: int | None = None
    reasoning: int | None = None
    cache_write: int | None = None


ReplyFields = tuple[JSON, Usage, "str | None"]
"""A reply read from an answer: the stored assistant message's fields, the usage, the stop reason."""

ClientFactory = Callable[[str | None, str, float, bool, ssl.SSLContext], Any]
"""(base URL or None for the SDK default, key, timeout in seconds, follow redirects, TLS context) -> an SDK client."""

Call = Callable[[Any, str, JSON], tuple[int, str, dict[str, str]]]
"""(client, model, body) -> (HTTP status, body text, headers): one request sent through the SDK."""


@dataclass(frozen=True, slots=True)
class Wire:
    """One API as an SDK speaks it.

    ``sdk_module`` is imported before a send (its loggers exist before the key filter looks for them);
    ``logger`` is the SDK's logger, which writes bodies at DEBUG; ``base_url_suffix`` is what a server's root
    needs to become the SDK's base URL (the OpenAI SDK's base URL includes ``/v1``, the others add it).
    """

    name: str
    sdk_module: str
    logger: str
    client: ClientFactory = field(compare=False)
    call: Call = field(compare=False)
    errors: Callable[[], ErrorTable] = field(compare=False)
    parse: Callable[[JSON], ReplyFields] = field(compare=False)
    usage: Callable[[JSON], StepUsage] = field(compare=False)
    base_url_suffix: str = ""


def int_or_none(value: Any) -> int | None:
    """An integer count, or None for anything else (a bool is not a count)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def posting(path: str) -> Call:
    """The call of an SDK whose client ``post``s a JSON body as it is (OpenAI, Anthropic) to ``path``.

    The body is the provider's JSON already, so it goes through the SDK's own ``post`` (its documented way to
    send a body as it is): the same client, auth, headers and errors as the typed ``create``, without ``create``
    rebuilding the JSON it was given through the SDK's typed transform.
    """

    def call(client: Any, model: str, body: JSON) -> tuple[int, str, dict[str, str]]:
        with SDK_IMPORT_LOCK:
            import httpx2  # the transport the OpenAI and Anthropic SDKs send through

        response = client.post(path, cast_to=httpx2.Response, body={**body, "model": model})
        return response.status_code, response.text, dict(response.headers)

    return call
