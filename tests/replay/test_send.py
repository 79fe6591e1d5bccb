"""Sending through each SDK: the body arrives unchanged, the key only in the auth header, outcomes are values."""

from __future__ import annotations

import base64
import gc
import json
import urllib.request
import warnings
from typing import Any

import pytest

from core import AssistantTextMessage
from core.providers import dialect_names, get_dialect
from core.replay.clients import CLIENTS
from core.replay.endpoints import availability, endpoint_for
from core.replay.parse import parse_reply
from core.replay.send import send
from tests.replay.conftest import CANARY_KEY, Listener
from web.devtools.stub_provider import Reply, StubServer

# Each body offers the tool the stub's scripted reply calls (a model calls only the tools it is given).
LOOKUP = {"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}
CHAT_TOOLS = [{"type": "function", "function": LOOKUP}]
BODIES: dict[str, dict[str, Any]] = {
    "openai": {
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
        "tools": CHAT_TOOLS,
    },
    "zhipu": {"messages": [{"role": "user", "content": "hi"}], "temperature": 0.2, "tools": CHAT_TOOLS},
    "doubao": {"messages": [{"role": "user", "content": "hi"}], "tools": CHAT_TOOLS},
    "openai-responses": {
        "input": [{"role": "user", "content": "hi"}],
        "instructions": "be brief",
        "tools": [{"type": "function", **LOOKUP, "strict": False}],
    },
    "anthropic": {
        "system": "be brief",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "lookup", "input_schema": LOOKUP["parameters"]}],
    },
    "gemini": {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "generationConfig": {"temperature": 0.5},
        "tools": [{"functionDeclarations": [{"name": "lookup", "parametersJsonSchema": LOOKUP["parameters"]}]}],
    },
}
AUTH_HEADER = {"gemini": "x-goog-api-key"}  # this anthropic SDK sends a bearer token (docs/providers.md 8.3)


def _script(stub: StubServer, replies: list[dict[str, Any]]) -> None:
    req = urllib.request.Request(f"{stub.base_url}/__stub/script", data=json.dumps(replies).encode(), method="POST")
    urllib.request.urlopen(req).close()


@pytest.mark.parametrize("dialect", dialect_names())
def test_body_arrives_as_built_and_the_reply_parses(dialect: str, stub: StubServer, stub_env: dict[str, str]) -> None:
    endpoint = endpoint_for(get_dialect(dialect), stub_env)
    assert endpoint is not None
    _script(stub, [{"text": "forty-two", "tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}]}])
    exchange = send(endpoint, "model-under-test", BODIES[dialect], timeout=10)
    assert exchange.status == "ok", exchange.error
    (seen,) = stub.state.requests
    if dialect == "gemini":
        assert seen.body["contents"] == BODIES["gemini"]["contents"]
        assert seen.body["systemInstruction"]["parts"] == [{"text": "be brief"}]
        assert seen.body["generationConfig"] == {"temperature": 0.5}
        assert seen.path.endswith("/models/model-under-test:generateContent")
    else:
        assert seen.body == {"model": "model-under-test", **BODIES[dialect]}
    header = AUTH_HEADER.get(dialect, "authorization")
    assert CANARY_KEY in seen.headers[header]
    leaked = {k: v for k, v in seen.headers.items() if CANARY_KEY in v and k != header}
    assert leaked == {}, "the key may travel only in the auth header"
    assert CANARY_KEY not in json.dumps(seen.body)
    reply = parse_reply(endpoint.wire, exchange.response, msg_id="r1", conversation_id="c", create_ts=1)
    assert isinstance(reply.message, AssistantTextMessage)
    assert reply.message.content == "forty-two"
    assert [c.name for c in reply.message.tool_calls or []] == ["lookup"]
    assert json.loads((reply.message.tool_calls or [])[0].arguments) == {"q": "x"}
    assert reply.usage.total_tokens


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "gemini", "openai-responses"])
@pytest.mark.parametrize(
    ("model", "status", "words"),
    [
        ("stub-error-500", "http_error", "HTTP 500"),
        ("stub-error-429", "rate_limited", "retry after 1 s"),
        ("stub-slow-3", "timeout", "time limit"),
    ],
)
def test_failures_become_outcomes_with_clear_errors(
    dialect: str, model: str, status: str, words: str, stub: StubServer, stub_env: dict[str, str]
) -> None:
    endpoint = endpoint_for(get_dialect(dialect), stub_env)
    assert endpoint is not None
    if dialect == "gemini" and status == "rate_limited":
        words = "HTTP 429"  # google-genai drops response headers from its errors
    exchange = send(endpoint, model, BODIES[dialect], timeout=1.0)
    assert exchange.status == status
    assert exchange.error is not None and words in exchange.error
    assert CANARY_KEY not in exchange.error
    assert CANARY_KEY not in (exchange.response_text or "")


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "gemini"])
@pytest.mark.parametrize("model", ["model-under-test", "stub-slow-3", "stub-error-500"])
def test_no_connection_outlives_its_client(
    dialect: str, model: str, stub: StubServer, stub_env: dict[str, str]
) -> None:
    # A leaked pooled socket surfaces later as a ResourceWarning in whatever runs
    # when the collector happens by (a server's file descriptors run out the same way).
    endpoint = endpoint_for(get_dialect(dialect), stub_env)
    assert endpoint is not None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        send(endpoint, model, BODIES[dialect], timeout=1.0)
        CLIENTS.close()
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_a_missing_key_is_unavailable_and_names_the_variable() -> None:
    env = {"ANTHROPIC_API_KEY": CANARY_KEY}
    assert endpoint_for(get_dialect("openai"), env) is None
    table = {a.provider.name: a for a in availability(env)}
    assert table["anthropic"].available and not table["openai"].available
    assert "OPENAI_API_KEY" in table["openai"].reason
    assert CANARY_KEY not in repr(table) and CANARY_KEY not in repr(endpoint_for(get_dialect("anthropic"), env))


def test_an_unreachable_provider_is_a_connection_error() -> None:
    endpoint = endpoint_for(
        get_dialect("openai"), {"OPENAI_API_KEY": CANARY_KEY, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    )
    assert endpoint is not None
    exchange = send(endpoint, "m", BODIES["openai"], timeout=2)
    assert exchange.status == "connection_error"
    assert CANARY_KEY not in (exchange.error or "")


# -- secret leakage through echoed errors ------------------------------------------------------------------


@pytest.mark.parametrize(("status", "limit"), [(500, 300), (200, 10_000)])
def test_a_key_straddling_a_cut_leaves_no_fragment(
    status: int, limit: int, stub: StubServer, stub_env: dict[str, str]
) -> None:
    # The text is not JSON, so it is kept as text, cut to a limit; the key starts 5 characters before the cut.
    endpoint = endpoint_for(get_dialect("openai"), stub_env)
    assert endpoint is not None
    stub.state.script.append(Reply(status=status, raw_body="." * (limit - 5) + CANARY_KEY + " tail"))
    exchange = send(endpoint, "m", BODIES["openai"], timeout=10)
    assert exchange.status == ("http_error" if status == 500 else "malformed")
    for text in (exchange.error or "", exchange.response_text or ""):
        assert CANARY_KEY[:5] not in text


ENCODED_ECHOES = {
    "json-unicode-escaped": "".join(f"\\u{ord(c):04x}" for c in CANARY_KEY),
    "base64-basic-auth": base64.b64encode(f"user:{CANARY_KEY}".encode()).decode(),
    "prefix-cut-by-the-provider": CANARY_KEY[:12],
}


@pytest.mark.parametrize("form", ENCODED_ECHOES)
def test_an_encoded_echo_of_the_key_in_an_error_is_removed(
    form: str, stub: StubServer, stub_env: dict[str, str]
) -> None:
    endpoint = endpoint_for(get_dialect("anthropic"), stub_env)
    assert endpoint is not None
    echo = ENCODED_ECHOES[form]
    stub.state.script.append(Reply(status=401, raw_body=f"denied for {echo}"))
    exchange = send(endpoint, "m", BODIES["anthropic"], timeout=10)
    assert exchange.status == "http_error" and "[redacted]" in (exchange.error or "")
    assert echo not in (exchange.error or "") + (exchange.response_text or "")


def test_a_key_echoed_in_retry_after_is_removed(stub: StubServer, stub_env: dict[str, str]) -> None:
    endpoint = endpoint_for(get_dialect("openai"), stub_env)
    assert endpoint is not None
    stub.state.script.append(Reply(status=429, headers={"retry-after": f"{CANARY_KEY}"}))
    exchange = send(endpoint, "m", BODIES["openai"], timeout=10)
    assert exchange.status == "rate_limited"
    assert CANARY_KEY not in f"{exchange.error} {exchange.retry_after}"


# -- credential forwarding on a redirect -------------------------------------------------------------------


@pytest.mark.parametrize("dialect", dialect_names())
@pytest.mark.parametrize("code", [301, 302, 307, 308])
def test_no_sdk_follows_a_redirect_to_another_origin(
    dialect: str, code: int, stub: StubServer, stub_env: dict[str, str], listener: Listener
) -> None:
    endpoint = endpoint_for(get_dialect(dialect), stub_env)
    assert endpoint is not None
    for _ in range(2):  # were a retry to happen, it must not follow either
        stub.state.script.append(Reply(status=code, headers={"location": f"{listener.base_url}/v1/steal?k=1"}))
    exchange = send(endpoint, "m", BODIES[dialect], timeout=5)
    assert listener.seen == [], "the redirect was followed: the key went to another origin"
    assert exchange.status == "http_error" and exchange.http_status == code
    error = exchange.error or ""
    assert f"redirect to {listener.base_url};" in error and "not followed" in error
