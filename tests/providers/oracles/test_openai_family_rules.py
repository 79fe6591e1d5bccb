"""The OpenAI-shaped endpoints' own refusals: a tool choice the vendor's endpoint does not take, and an assistant
message with neither content nor tool calls. Each case names its oracle; the builder's fix names the rule, and
preflight calls the unfixed body an error."""

from __future__ import annotations

from typing import Any

import pytest

from core.preflight import check_body
from core.preflight.catalogue import fixes
from core.providers import NamedToolChoice, RequestOptions, RequestResult, provider_named
from tests.providers.builders import WEATHER, reply, run, user

HELLO = [user("hello", 1)]


def _errors(provider: str, body: dict[str, Any]) -> list[str]:
    dialect = provider_named(provider)
    model = body.get("model")
    findings = check_body(dialect, body, dialect.profile(RequestOptions(model=model)), model)
    return [f.rule for f in findings if f.severity == "error"]


def _fixed(result: RequestResult, rule: str) -> bool:
    found = [f for f in fixes(provider_named(result.dialect), result.warnings) if f.rule.id == rule]
    return bool(found) and all(f.rule.authority != "not in the catalogue" for f in found)


# -- Zhipu takes tool_choice "auto" only -----------------------------------------------------------------------
# Oracle: Z.AI (Zhipu GLM) 400 "Tool choice must be auto" for "required" and for a named function
# (vectorize-io/hindsight#4246; AstrBotDevs/AstrBot#7177, glm-4.5-air).
@pytest.mark.parametrize("choice", ["required", "none", NamedToolChoice("get_weather")])
def test_a_zhipu_tool_choice_other_than_auto_is_sent_as_auto_naming_its_rule(choice: Any) -> None:
    result = run("zhipu", HELLO, tools=(WEATHER,), tool_choice=choice)
    assert result.body["tool_choice"] == "auto"
    assert _fixed(result, "tool-choice-supported")


@pytest.mark.parametrize("choice", ["required", {"type": "function", "function": {"name": "get_weather"}}])
def test_preflight_calls_a_zhipu_tool_choice_other_than_auto_an_error(choice: Any) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    body = {"model": "glm-4.6v", "messages": [{"role": "user", "content": "hi"}], "tools": tools}
    assert "tool-choice-supported" in _errors("zhipu", {**body, "tool_choice": choice})
    assert "tool-choice-supported" not in _errors("zhipu", {**body, "tool_choice": "auto"})
    # OpenAI itself takes both.
    assert "tool-choice-supported" not in _errors("openai", {**body, "model": "gpt-4.1", "tool_choice": choice})


# -- an assistant message needs content unless it has tool calls ------------------------------------------------
# Oracle: OpenAI 400 "Invalid value for 'content': expected a string, got null" for an assistant message without
# tool_calls (vercel/ai#14950: content is "required unless tool_calls or function_call is specified"; it verified
# that an empty string is taken); Mistral through the same shape: "Assistant message must have either content or
# tool_calls, but not none." (OpenHands/OpenHands#8685).
@pytest.mark.parametrize("provider", ["openai", "zhipu", "doubao"])
def test_an_empty_assistant_turn_gets_a_placeholder_naming_its_rule(provider: str) -> None:
    result = run(provider, [user("hello", 1), reply("", 1), user("again", 2)])
    assistant = [m for m in result.body["messages"] if m["role"] == "assistant"]
    assert assistant and all(isinstance(m.get("content"), str) and m["content"] for m in assistant)
    assert _fixed(result, "assistant-content-required")


def test_preflight_calls_an_assistant_message_without_content_or_tool_calls_an_error() -> None:
    turns = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None},
        {"role": "user", "content": "?"},
    ]
    body = {"model": "gpt-4.1", "messages": turns}
    assert "assistant-content-required" in _errors("openai", body)
    taken = [turns[0], {"role": "assistant", "content": ""}, turns[2]]
    assert "assistant-content-required" not in _errors("openai", {**body, "messages": taken})
