"""Each SDK's error table, entry by entry: the real SDK raises the type against the loopback stub, and the send
records the outcome the table names for it."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from google.genai import errors

import core.replay.send as send_module
from core.providers import get_dialect
from core.replay.endpoints import endpoint_for
from core.replay.send import error_table, send
from tests.replay.conftest import CANARY_KEY
from tests.replay.test_send import BODIES
from web.devtools.stub_provider import Reply, StubServer

UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens on loopback, so the connection is refused
BASE_URL_VAR = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL", "gemini": "GEMINI_BASE_URL"}

# How to make an SDK raise: a model name the stub knows, a scripted reply, or a base URL nobody answers at.
SERVER_500 = {"model": "stub-error-500"}
RATE_LIMITED = {"model": "stub-error-429"}
SLOW = {"model": "stub-slow-3"}
BAD_REQUEST = {"reply": Reply(status=400)}
REDIRECT = {"reply": Reply(status=307, headers={"location": f"{UNREACHABLE}/elsewhere"})}
NOT_JSON = {"reply": Reply(raw_body="{not json")}
NOBODY_LISTENS = {"base_url": UNREACHABLE}

# (dialect, the table entry, how to provoke it, the outcome)
ENTRIES: list[tuple[str, type[BaseException], dict[str, Any], str]] = [
    ("openai", openai.APIStatusError, SERVER_500, "http_error"),
    ("openai", openai.RateLimitError, RATE_LIMITED, "rate_limited"),
    ("openai", openai.APITimeoutError, SLOW, "timeout"),
    ("openai", openai.APIConnectionError, NOBODY_LISTENS, "connection_error"),
    ("anthropic", anthropic.APIStatusError, SERVER_500, "http_error"),
    ("anthropic", anthropic.RateLimitError, RATE_LIMITED, "rate_limited"),
    ("anthropic", anthropic.APITimeoutError, SLOW, "timeout"),
    ("anthropic", anthropic.APIConnectionError, NOBODY_LISTENS, "connection_error"),
    ("gemini", errors.APIError, REDIRECT, "http_error"),
    ("gemini", errors.ClientError, BAD_REQUEST, "http_error"),
    ("gemini", errors.ServerError, SERVER_500, "http_error"),
    ("gemini", httpx2.TimeoutException, SLOW, "timeout"),
    ("gemini", httpx2.TransportError, NOBODY_LISTENS, "connection_error"),
    ("gemini", json.JSONDecodeError, NOT_JSON, "malformed"),
]


def _entry_of(exc: BaseException, table: Any) -> type[BaseException]:
    return next(cls for cls in type(exc).__mro__ if cls in table)


@pytest.mark.parametrize(
    ("dialect", "entry", "provoke", "outcome"), ENTRIES, ids=[f"{e[0]}-{e[1].__name__}" for e in ENTRIES]
)
def test_each_mapped_sdk_error_becomes_its_outcome(
    dialect: str,
    entry: type[BaseException],
    provoke: dict[str, Any],
    outcome: str,
    stub: StubServer,
    stub_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raised: list[BaseException] = []
    dispatch = send_module._dispatch

    def recording(*args: Any) -> Any:
        try:
            return dispatch(*args)
        except Exception as exc:
            raised.append(exc)
            raise

    monkeypatch.setattr(send_module, "_dispatch", recording)
    env = {**stub_env, BASE_URL_VAR[dialect]: provoke.get("base_url", stub_env[BASE_URL_VAR[dialect]])}
    if "reply" in provoke:
        stub.state.script.append(provoke["reply"])
    endpoint = endpoint_for(get_dialect(dialect), env)
    assert endpoint is not None
    exchange = send(endpoint, provoke.get("model", "m"), BODIES[dialect], timeout=1.0)
    (exc,) = raised
    assert _entry_of(exc, error_table(endpoint.wire)) is entry
    assert exchange.status == outcome
    assert CANARY_KEY not in (exchange.error or "")


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "gemini"])
def test_every_sdk_table_entry_is_tested(dialect: str) -> None:
    """The entries above are the whole of each SDK's own table (the builtin ones are shared by all)."""
    own = set(get_dialect(dialect).wire.errors())
    assert own == {entry for d, entry, _, _ in ENTRIES if d == dialect}
