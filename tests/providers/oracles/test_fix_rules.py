"""Every fix the builder makes names the preflight rule it answers, so ``payload --report`` and ``traceloupe rules``
list it with its source: the max_tokens clamp, a tool choice that cannot be sent, placeholder turns. Each case
names its oracle; preflight calls the unfixed body an error."""

from __future__ import annotations

from typing import Any

import pytest

from core import BaseMessage
from core.preflight import check_body
from core.preflight.catalogue import catalogue, fixes
from core.providers import NamedToolChoice, RequestOptions, RequestResult, provider_named
from tests.providers.builders import WEATHER, reply, run, user

HELLO = [user("hello", 1)]


def _errors(provider: str, body: dict[str, Any], model: str) -> list[str]:
    dialect = provider_named(provider)
    findings = check_body(dialect, body, dialect.profile(RequestOptions(model=model)), model)
    return [f.rule for f in findings if f.severity == "error"]


def _fixed(result: RequestResult, rule: str) -> bool:
    """Whether the build fixed ``rule`` and the catalogue gives that fix a source."""
    found = [f for f in fixes(provider_named(result.dialect), result.warnings) if f.rule.id == rule]
    return bool(found) and all(f.rule.authority != "not in the catalogue" for f in found)


# -- max_tokens above the model's output limit ---------------------------------------------------------------
# Oracle: Anthropic 400 "max_tokens: 999999 > 64000, which is the maximum allowed number of output tokens for
# claude-sonnet-4-5"; OpenAI 400 "max_tokens is too large: 999999. This model supports at most 16384 completion
# tokens"; the model table (LiteLLM) gives the limits.
@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("anthropic", "claude-sonnet-4-5"),
        ("anthropic", "claude-haiku-4-5"),
        ("openai", "gpt-4o"),
        ("gemini", "gemini-2.5-flash"),
    ],
)
def test_the_max_tokens_clamp_names_its_rule(provider: str, model: str) -> None:
    assert _fixed(run(provider, HELLO, model=model, max_tokens=999_999), "max-output-tokens")


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        (
            "anthropic",
            {"model": "claude-sonnet-4-5", "max_tokens": 999_999, "messages": [{"role": "user", "content": "hi"}]},
        ),
        ("openai", {"model": "gpt-4o", "max_tokens": 999_999, "messages": [{"role": "user", "content": "hi"}]}),
        ("openai-responses", {"model": "gpt-4o", "max_output_tokens": 999_999, "input": "hi"}),
    ],
)
def test_preflight_calls_max_tokens_above_the_output_limit_an_error(provider: str, body: dict[str, Any]) -> None:
    assert "max-output-tokens" in _errors(provider, body, body["model"])
    assert "max-output-tokens" not in _errors(provider, {**body, "model": "not-a-known-model"}, "not-a-known-model")


def test_preflight_calls_a_gemini_max_output_tokens_above_the_limit_an_error() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {"maxOutputTokens": 999_999}}
    assert "max-output-tokens" in _errors("gemini", body, "gemini-2.5-flash")


# -- a tool choice that cannot be sent --------------------------------------------------------------------------
# Oracle: OpenAI 400 "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."
# (writer/writer-framework#1013); a forced function missing from the tools is refused (lablup/mlxcel#1581).
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_required_tool_choice_without_tools_names_its_rule(provider: str) -> None:
    assert _fixed(run(provider, HELLO, tool_choice="required"), "tool-choice-needs-tools")


@pytest.mark.parametrize("provider", ["openai-responses", "gemini"])
def test_a_named_tool_choice_no_tool_has_names_its_rule(provider: str) -> None:
    result = run(provider, HELLO, tools=(WEATHER,), tool_choice=NamedToolChoice("get_time"))
    assert _fixed(result, "forced-tool-defined")


# Oracle: Anthropic 400 "Thinking may not be enabled when tool_choice forces tool use." (extended-thinking docs:
# with thinking, tool_choice takes only "auto" or "none").
@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-haiku-4-5"])
def test_a_forced_tool_choice_with_thinking_is_sent_as_auto_and_names_its_rule(model: str) -> None:
    result = run(
        "anthropic", HELLO, model=model, thinking=True, max_tokens=8000, tools=(WEATHER,), tool_choice="required"
    )
    assert result.body["tool_choice"] == {"type": "auto"}
    assert _fixed(result, "forced-tool-with-thinking")


@pytest.mark.parametrize("choice", [{"type": "any"}, {"type": "tool", "name": "get_weather"}])
def test_preflight_calls_a_forced_tool_choice_with_thinking_an_error(choice: dict[str, Any]) -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 8000,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tools": [{"name": "get_weather", "input_schema": {"type": "object", "properties": {}}}],
        "tool_choice": choice,
        "messages": [{"role": "user", "content": "hi"}],
    }
    assert "forced-tool-with-thinking" in _errors("anthropic", body, "claude-sonnet-4-5")
    body["tool_choice"] = {"type": "auto"}
    assert "forced-tool-with-thinking" not in _errors("anthropic", body, "claude-sonnet-4-5")


# -- placeholders ----------------------------------------------------------------------------------------------
# Oracle: Anthropic 400 "messages must have at least one element" (Helicone/helicone#5257); Gemini
# "contents is not specified" (generateContent API reference: contents[] Required).
@pytest.mark.parametrize(("provider", "rule"), [("anthropic", "messages-required"), ("gemini", "contents-required")])
def test_the_placeholder_turn_for_a_system_prompt_alone_names_its_rule(provider: str, rule: str) -> None:
    system = BaseMessage(role="system", content="Be brief.", msg_id="s1", create_ts=1)
    assert _fixed(run(provider, [system]), rule)


# Oracle: Anthropic/Bedrock "first message must use the user role" (anthropics/anthropic-sdk-typescript#622).
@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_the_placeholder_user_turn_before_a_model_first_history_names_its_rule(provider: str) -> None:
    assert _fixed(run(provider, [reply("Hi, how can I help?", 1), user("hello", 2)]), "first-message-user")


# Oracle: Anthropic 400 "text content blocks must be non-empty" (langchain#20535); Gemini "contents.parts must not
# be empty" (langchainjs#9987).
@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_the_placeholder_for_an_empty_model_turn_names_its_rule(provider: str) -> None:
    assert _fixed(run(provider, [user("hello", 1), reply("", 1), user("again?", 2)]), "non-empty-content")


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai-responses", "gemini"])
def test_the_catalogue_lists_the_shared_fix_rules(provider: str) -> None:
    ids = {rule.id for rule in catalogue(provider_named(provider))}
    assert {"max-output-tokens", "tool-choice-needs-tools", "forced-tool-defined"} <= ids
