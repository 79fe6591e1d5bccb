"""The stub provider, in its default mode, refuses what the real APIs refuse (status and message), and answers
a scripted call of a tool the request did not define as text; the lenient mode answers as scripted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from web.devtools.stub_provider import StubServer
from web.devtools.stub_refusals import refusal

KEY = "sk-stub-test-key"
USER = {"role": "user", "content": "weather?"}
TOOL_TURN = [
    USER,
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"}]},
]
WEATHER = {"name": "get_weather", "input_schema": {"type": "object", "properties": {}}}


@pytest.fixture
def clients(stub: StubServer) -> Iterator[tuple[anthropic.Anthropic, openai.OpenAI]]:
    with (
        anthropic.Anthropic(base_url=stub.base_url, api_key=KEY, max_retries=0) as claude,
        openai.OpenAI(base_url=f"{stub.base_url}/v1", api_key=KEY, max_retries=0) as gpt,
    ):
        yield claude, gpt


def test_anthropic_tool_blocks_without_tools_are_refused_as_the_api_does(
    stub: StubServer, clients: tuple[anthropic.Anthropic, openai.OpenAI]
) -> None:
    with pytest.raises(anthropic.BadRequestError) as refused:
        clients[0].messages.create(model="claude-test", max_tokens=64, messages=TOOL_TURN)  # type: ignore[arg-type]
    assert refused.value.status_code == 400
    assert "Requests which include `tool_use` or `tool_result` blocks must define tools." in str(refused.value)
    assert [r["status"] for r in stub.state.refusals] == [400]


def test_the_same_history_with_its_tools_is_answered(
    stub: StubServer, clients: tuple[anthropic.Anthropic, openai.OpenAI]
) -> None:
    reply = clients[0].messages.create(
        model="claude-test",
        max_tokens=64,
        messages=TOOL_TURN,  # type: ignore[arg-type]
        tools=[WEATHER],  # type: ignore[list-item]
    )
    assert reply.content and not stub.state.refusals


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tool_choice": "required"}, "'tool_choice' is only allowed when 'tools' are specified."),
        (
            {
                "tools": [{"type": "function", "function": {"name": "get_weather"}}],
                "tool_choice": {"type": "function", "function": {"name": "lookup"}},
            },
            "'lookup' is not among the 'tools'",
        ),
        ({"messages": [USER, {"role": "tool", "tool_call_id": "c9", "content": "x"}]}, "preceeding message"),
    ],
)
def test_openai_refusals_carry_the_api_message(
    clients: tuple[anthropic.Anthropic, openai.OpenAI], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        clients[1].chat.completions.create(**{"model": "gpt-test", "messages": [USER], **kwargs})
    assert message in str(refused.value)


def test_a_scripted_call_of_an_undefined_tool_is_answered_as_text(
    stub: StubServer, clients: tuple[anthropic.Anthropic, openai.OpenAI]
) -> None:
    reply = clients[1].chat.completions.create(model="stub-tool", messages=[USER])  # type: ignore[list-item]
    assert reply.choices[0].message.tool_calls is None
    assert "search" in (reply.choices[0].message.content or "")


def test_the_lenient_stub_answers_as_scripted() -> None:
    stub = StubServer(strict=False).start()
    try:
        with anthropic.Anthropic(base_url=stub.base_url, api_key=KEY, max_retries=0) as claude:
            reply = claude.messages.create(model="stub-tool", max_tokens=64, messages=TOOL_TURN)  # type: ignore[arg-type]
        assert [block.type for block in reply.content] == ["tool_use"]
    finally:
        stub.shutdown()
        stub.server_close()


FC = {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {}}}]}
FR = {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": "18C"}}}]}
GEMINI_TOOLS = [{"functionDeclarations": [{"name": "get_weather"}]}]
ORPHAN_OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "x"}


@pytest.mark.parametrize(
    ("dialect", "body", "message"),
    [
        ("anthropic", {"model": "m", "messages": [USER]}, "max_tokens: Field required"),
        ("anthropic", {"model": "m", "max_tokens": 8, "messages": [USER], "tools": [WEATHER],
                       "tool_choice": {"type": "tool", "name": "lookup"}}, "'lookup' is not among the tools"),
        ("anthropic", {"model": "m", "max_tokens": 8, "messages": [USER, TOOL_TURN[2]], "tools": [WEATHER]},
         "unexpected `tool_use_id` found in `tool_result` blocks"),
        ("openai-responses", {"model": "m", "input": [ORPHAN_OUTPUT]},
         "No tool call found for function call output with call_id c1."),
        ("gemini", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}, FR], "tools": GEMINI_TOOLS},
         "function response turn comes immediately after a function call turn"),
        ("gemini", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                    "toolConfig": {"functionCallingConfig": {"mode": "ANY"}}},
         "Function calling config is set without function_declarations."),
    ],
)  # fmt: skip
def test_each_provider_refusal_has_its_message(dialect: Any, body: dict[str, Any], message: str) -> None:
    refused = refusal(dialect, body)
    assert refused is not None and refused[0] == 400 and message in refused[1]


@pytest.mark.parametrize(
    ("dialect", "body"),
    [
        ("gemini", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}, FC, FR], "tools": GEMINI_TOOLS}),
        ("anthropic", {"model": "m", "max_tokens": 8, "messages": TOOL_TURN, "tools": [WEATHER]}),
    ],
)
def test_a_well_formed_tool_turn_is_taken(dialect: Any, body: dict[str, Any]) -> None:
    assert refusal(dialect, body) is None
