"""The stub provider answers the official SDKs like the providers do: replies, tool calls, errors, delays."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types as gtypes

from web.devtools.stub_provider import StubServer

KEY = "sk-stub-test-key"
_OPENED: list[openai.OpenAI | anthropic.Anthropic | genai.Client] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    """Close every SDK client a test opened, so no pooled socket outlives its test."""
    yield
    while _OPENED:
        _OPENED.pop().close()


def _openai(stub: StubServer, **kw: Any) -> openai.OpenAI:
    client = openai.OpenAI(base_url=f"{stub.base_url}/v1", api_key=KEY, max_retries=0, **kw)
    _OPENED.append(client)
    return client


def _anthropic(stub: StubServer, **kw: Any) -> anthropic.Anthropic:
    client = anthropic.Anthropic(base_url=stub.base_url, api_key=KEY, max_retries=0, **kw)
    _OPENED.append(client)
    return client


def _gemini(stub: StubServer) -> genai.Client:
    client = genai.Client(api_key=KEY, http_options=gtypes.HttpOptions(base_url=stub.base_url))
    _OPENED.append(client)
    return client


def _script(stub: StubServer, replies: list[dict[str, Any]]) -> None:
    req = urllib.request.Request(f"{stub.base_url}/__stub/script", data=json.dumps(replies).encode(), method="POST")
    with urllib.request.urlopen(req) as resp:
        assert resp.status == 200


def test_openai_sdk_gets_a_reply_and_the_stub_records_the_exact_body(stub: StubServer) -> None:
    messages = [{"role": "user", "content": "hello"}]
    reply = _openai(stub).chat.completions.create(model="gpt-test", messages=messages)  # type: ignore[arg-type]
    assert reply.choices[0].message.content
    assert reply.usage is not None and reply.usage.total_tokens > 0
    (seen,) = stub.state.requests
    assert seen.body == {"model": "gpt-test", "messages": messages}
    assert seen.headers["authorization"] == f"Bearer {KEY}"


def test_each_answer_has_ids_of_its_own_as_the_real_apis_give(stub: StubServer) -> None:
    # OpenLLMetry's Responses instrumentation keys what it records by response id: two answers under one id are one.
    messages = [{"role": "user", "content": "hello"}]
    chat = {_openai(stub).chat.completions.create(model="m", messages=messages).id for _ in range(2)}  # type: ignore[arg-type]
    responses = [_openai(stub).responses.create(model="m", input="hello") for _ in range(2)]
    anthropic_ids = {_anthropic(stub).messages.create(model="m", max_tokens=9, messages=messages).id for _ in range(2)}  # type: ignore[arg-type]
    assert len(chat) == len(anthropic_ids) == len({r.id for r in responses}) == 2
    assert len({item.id for r in responses for item in r.output}) == 2


def test_anthropic_sdk_gets_tool_use_blocks(stub: StubServer) -> None:
    reply = _anthropic(stub).messages.create(
        model="stub-tool",
        max_tokens=64,
        messages=[{"role": "user", "content": "search"}],
        tools=[{"name": "search", "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}}],
    )
    kinds = [block.type for block in reply.content]
    assert kinds == ["tool_use"]
    assert stub.state.requests[0].path == "/v1/messages"


def test_gemini_sdk_gets_text_and_thought_parts(stub: StubServer) -> None:
    _script(stub, [{"text": "hi from gemini", "reasoning": "thinking..."}])
    client = _gemini(stub)
    reply = client.models.generate_content(model="gemini-test", contents="hello")
    assert reply.text == "hi from gemini"
    assert stub.state.requests[0].headers["x-goog-api-key"] == KEY


def test_errors_arrive_as_the_sdk_error_types_with_retry_after(stub: StubServer) -> None:
    with pytest.raises(openai.InternalServerError):
        _openai(stub).chat.completions.create(model="stub-error-500", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(anthropic.RateLimitError) as caught:
        _anthropic(stub).messages.create(
            model="stub-error-429", max_tokens=8, messages=[{"role": "user", "content": "x"}]
        )
    assert caught.value.response.headers["retry-after"] == "1"


def test_a_slow_reply_times_out_on_the_client(stub: StubServer) -> None:
    with pytest.raises(openai.APITimeoutError):
        _openai(stub, timeout=0.3).chat.completions.create(
            model="stub-slow-2", messages=[{"role": "user", "content": "x"}]
        )


def test_a_malformed_answer_is_not_json(stub: StubServer) -> None:
    with pytest.raises(ValueError, match="Expecting property name"):
        _openai(stub).chat.completions.create(model="stub-malformed", messages=[{"role": "user", "content": "x"}])


def test_the_stub_refuses_to_bind_beyond_loopback() -> None:
    with pytest.raises(ValueError, match="loopback"):
        StubServer(host="0.0.0.0")


def test_a_step_script_answers_each_request_for_its_model_in_turn_with_ids_of_its_own(stub: StubServer) -> None:
    steps = [{"tool_calls": [{"name": "search", "arguments": {"q": "x"}}], "text": ""}, {"status": 500}, {"text": "ok"}]
    request = urllib.request.Request(
        f"{stub.base_url}/__stub/script",
        data=json.dumps({"model": "m-steps", "steps": steps}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request) as answer:
        assert json.load(answer) == {"queued": 3}
    client = _openai(stub)
    search = {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {}}}}
    first = client.chat.completions.create(
        model="m-steps",
        messages=[{"role": "user", "content": "hi"}],
        tools=[search],  # type: ignore[list-item]
    )
    calls = first.choices[0].message.tool_calls or []
    assert [(c.id, c.function.name) for c in calls] == [("call_s1_0", "search")]  # type: ignore[union-attr]
    other = client.chat.completions.create(model="other", messages=[{"role": "user", "content": "hi"}])
    assert other.choices[0].message.content == "This is the stub provider's reply."  # other models are unscripted
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="m-steps", messages=[{"role": "user", "content": "hi"}])
    last = client.chat.completions.create(model="m-steps", messages=[{"role": "user", "content": "hi"}])
    assert last.choices[0].message.content == "ok"


def test_a_client_that_hangs_up_during_a_slow_reply_stops_counting_as_in_flight(stub: StubServer) -> None:
    """A killed worker's call must not look like a live one: the limit tests count the calls in flight."""
    body = json.dumps({"model": "stub-slow-30", "messages": [{"role": "user", "content": "hi"}]}).encode()
    with socket.create_connection(("127.0.0.1", stub.server_address[1])) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        _wait(lambda: stub.state.in_flight == 1)
    _wait(lambda: stub.state.in_flight == 0)  # long before the 30 s reply was due
    assert stub.state.peak_in_flight == 1


def _wait(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
