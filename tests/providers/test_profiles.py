"""Model profiles: each model name finds the profile its provider's rules call for; unknown ones say so."""

from __future__ import annotations

import re

import pytest

from core import TextMessage
from core.providers import (
    ChatLLM,
    RequestOptions,
    all_providers,
    dialect_names,
    get_dialect,
    profile_for,
    provider_named,
)

# (dialect, model, profile name): two families per model-dependent rule. The model table knows each of these (its own
# id or a dated alias): their thinking and reasoning modes come from its flags.
KNOWN = [
    ("anthropic", "claude-opus-4-7", "claude-adaptive-only"),
    ("anthropic", "claude-sonnet-5", "claude-adaptive-only"),
    ("anthropic", "claude-sonnet-4-6", "claude-adaptive"),
    ("anthropic", "claude-sonnet-4-5", "claude-budget"),
    ("anthropic", "claude-sonnet-4-5-20250929", "claude-budget"),
    ("anthropic", "claude-3-5-haiku-20241022", "claude-no-thinking"),
    ("gemini", "gemini-3-pro-preview", "gemini-3"),
    ("gemini", "gemini-2.5-pro", "gemini-2.5-pro"),
    ("gemini", "gemini-2.5-flash", "gemini-2.5-flash"),
    ("gemini", "gemini-2.5-flash-lite", "gemini-2.5-flash"),
    ("gemini", "gemini-2.0-flash", "gemini-no-thinking"),
    ("openai", "o3-mini", "o3-mini"),
    ("openai", "gpt-5", "gpt-5"),
    ("openai", "gpt-5-mini", "gpt-5-mini"),
    ("openai", "gpt-5.1", "gpt-5.1"),
    ("openai", "gpt-5-chat-latest", "gpt-5-chat-latest"),
    ("openai", "gpt-4.1", "gpt-4.1"),
    ("openai", "gpt-4o", "gpt-4o"),
    ("openai-responses", "o4-mini", "o4-mini"),
    ("zhipu", "glm-4.6v", "glm"),
    ("doubao", "doubao-seed-1-6", "doubao"),
]
# Not in the model table: the profile of the name pattern stands in, with a warning saying so (provider-prefixed ids
# match too).
NAMED_ONLY = [
    ("anthropic", "us.anthropic.claude-opus-4-7-v1:0", "claude-adaptive-only"),
    ("anthropic", "claude-opus-4-1", "claude-budget"),
    ("anthropic", "claude-3-7-sonnet-latest", "claude-budget"),
    ("gemini", "gemini-3.1-flash", "gemini-3"),
]


@pytest.mark.parametrize(("dialect", "model", "expected"), KNOWN)
def test_a_known_model_finds_its_profile_without_a_warning(dialect: str, model: str, expected: str) -> None:
    choice = profile_for(get_dialect(dialect), model)
    assert (choice.profile.name, choice.profile.dialect, choice.warning) == (expected, dialect, None)


@pytest.mark.parametrize(("dialect", "model", "expected"), NAMED_ONLY)
def test_a_model_the_table_does_not_know_follows_its_name_with_a_warning(
    dialect: str, model: str, expected: str
) -> None:
    choice = profile_for(get_dialect(dialect), model)
    assert (choice.profile.name, choice.profile.dialect) == (expected, dialect)
    assert choice.warning is not None and f"model {model!r} is not in the model table" in choice.warning


# (dialect, model, profile field, what the table's flags give, what the name pattern gives): the table wins.
TABLE_DECIDES = [
    # LiteLLM: gpt-5.4-pro takes neither effort none nor minimal: it cannot switch reasoning off, low is its least.
    ("openai", "gpt-5.4-pro", "thinking_off", False, True),
    ("openai", "gpt-5.4-pro", "effort_off", "low", "none"),
    # LiteLLM: gpt-5.2-pro takes minimal, not none.
    ("openai-responses", "gpt-5.2-pro", "effort_off", "minimal", "none"),
    # LiteLLM: gpt-5.2-chat-latest reasons (one effort, medium: egoist/chatwise-releases#1257).
    ("openai-responses", "gpt-5.2-chat-latest", "reasoning_model", True, False),
    # LiteLLM: gpt-5-search-api has no supports_reasoning.
    ("openai", "gpt-5-search-api", "reasoning_model", False, True),
    # LiteLLM: the TTS and computer-use Gemini 2.5 models have no supports_reasoning: no thinkingConfig.
    ("gemini", "gemini-2.5-pro-preview-tts", "gemini_thinking", "none", "budget"),
    ("gemini", "gemini-2.5-computer-use-preview-10-2025", "gemini_thinking", "none", "budget"),
]


@pytest.mark.parametrize(("dialect", "model", "field", "table", "named"), TABLE_DECIDES)
def test_the_model_table_decides_reasoning_before_the_name_patterns(
    dialect: str, model: str, field: str, table: object, named: object
) -> None:
    provider = get_dialect(dialect)
    pattern = next((p for pattern, p in provider.profiles if re.search(pattern, model)), provider.conservative)
    assert getattr(pattern, field) == named
    assert getattr(profile_for(provider, model).profile, field) == table


@pytest.mark.parametrize("dialect", dialect_names())
def test_the_default_model_of_every_dialect_is_known(dialect: str) -> None:
    choice = profile_for(get_dialect(dialect), None)
    assert choice.warning is None and choice.model


@pytest.mark.parametrize("dialect", dialect_names())
def test_an_unknown_model_gets_the_conservative_profile_and_a_warning(dialect: str) -> None:
    choice = profile_for(get_dialect(dialect), "mystery-model-9")
    assert choice.profile == get_dialect(dialect).conservative
    assert choice.warning is not None and "mystery-model-9" in choice.warning


def test_the_warning_for_an_unknown_model_reaches_the_request() -> None:
    msgs = [TextMessage(content="Hi", msg_id="u1", create_ts=1)]
    result = ChatLLM(provider_named("gemini"), RequestOptions(model="mystery-model-9")).construct_request_params(msgs)
    assert result.profile.name == "gemini-conservative"
    assert [(w.msg_id, w.element) for w in result.warnings] == [(None, "model")]


def test_every_profile_names_its_evidence_and_its_dialect() -> None:
    for provider in all_providers():
        for _, profile in provider.profiles:
            assert profile.evidence and profile.dialect == provider.name
        assert provider.conservative.dialect == provider.name


@pytest.mark.parametrize("dialect", dialect_names())
def test_tool_name_rewrites_are_accepted_and_keep_distinct_names_apart(dialect: str) -> None:
    rule = profile_for(get_dialect(dialect), None).profile.tool_names
    names = ["get weather", "get.weather", "get/weather", "1st", "x" * 200, "ok_name"]
    sent = [rule.rewrite(n) for n in names]
    assert all(rule.accepts(s) for s in sent)
    assert len(set(sent)) == len(names)
    assert rule.rewrite("ok_name") == "ok_name"
