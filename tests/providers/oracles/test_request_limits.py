"""Limits a provider checks before reading the conversation: each built body is fixed with a warning, and
preflight calls the unfixed body an error. Each case names its oracle."""

from __future__ import annotations

from typing import Any

import pytest

from core import BaseMessage
from core.preflight import check_body, preflight
from core.providers import provider_named
from tests.providers.builders import run, user

HELLO = [user("hello", 1)]


def _errors(provider: str, body: dict[str, Any], model: str) -> list[str]:
    dialect = provider_named(provider)
    return [f.rule for f in check_body(dialect, body, dialect.profile(_options(model))) if f.severity == "error"]


def _options(model: str) -> Any:
    from core.providers import RequestOptions

    return RequestOptions(model=model)


# Oracle: anthropic SDK, ThinkingConfigEnabledParam.budget_tokens: "Must be ≥1024 and less than `max_tokens`".
@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-opus-4-1"])
@pytest.mark.parametrize("max_tokens", [1, 1000, 1024])
def test_a_thinking_budget_is_at_least_1024_and_below_max_tokens(model: str, max_tokens: int) -> None:
    result = run("anthropic", HELLO, model=model, thinking=True, max_tokens=max_tokens)
    budget = result.body["thinking"]["budget_tokens"]
    assert budget >= 1024 and budget < result.body["max_tokens"]
    assert result.body["max_tokens"] - budget == max_tokens  # the room asked for the answer is kept
    assert any("smallest budget" in str(w) for w in result.warnings)
    assert not [f for f in preflight(result).findings if f.severity == "error"]


@pytest.mark.oracle_accepts
def test_a_thinking_budget_that_fits_is_sent_without_a_warning() -> None:
    result = run("anthropic", HELLO, model="claude-sonnet-4-5", thinking=True, max_tokens=8000)
    assert result.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert result.body["max_tokens"] == 8000 and not result.warnings


@pytest.mark.parametrize(("budget", "max_tokens"), [(999, 4096), (2048, 2048), (4096, 2048)])
def test_preflight_calls_a_budget_out_of_range_an_error(budget: int, max_tokens: int) -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": max_tokens,
        "thinking": {"type": "enabled", "budget_tokens": budget},
        "messages": [{"role": "user", "content": "hi"}],
    }
    assert "thinking-budget-range" in _errors("anthropic", body, "claude-sonnet-4-5")


# Oracle: OpenAI 400 "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got
# 10 instead." (vectorize-io/hindsight#58; braintrustdata/lingua#186 clamps to 16).
@pytest.mark.parametrize("model", ["gpt-4.1", "o3"])
@pytest.mark.parametrize("max_tokens", [1, 10, 15])
def test_a_responses_output_limit_is_at_least_16(model: str, max_tokens: int) -> None:
    result = run("openai-responses", HELLO, model=model, max_tokens=max_tokens)
    assert result.body["max_output_tokens"] == 16
    assert any("below the Responses API's minimum of 16" in str(w) for w in result.warnings)
    assert not [f for f in preflight(result).findings if f.severity == "error"]


def test_preflight_calls_a_responses_output_limit_under_16_an_error() -> None:
    body = {"model": "gpt-4.1", "max_output_tokens": 10, "input": [{"role": "user", "content": "hi"}]}
    assert "max-output-tokens-minimum" in _errors("openai-responses", body, "gpt-4.1")


# Oracles: Anthropic 400 "messages must have at least one element" (Helicone/helicone#5257,
# arthur-ai/arthur-engine#1302); Gemini generateContent "contents[] Required" (ai.google.dev/api/generate-content).
SYSTEM_ONLY = [BaseMessage(role="system", content="You are terse.", msg_id="s1")]


@pytest.mark.parametrize(("provider", "key"), [("anthropic", "messages"), ("gemini", "contents")])
def test_a_history_of_a_system_prompt_alone_gets_a_placeholder_user_turn(provider: str, key: str) -> None:
    result = run(provider, SYSTEM_ONLY)
    turns = result.body[key]
    assert len(turns) == 1 and turns[0]["role"] == "user"
    assert any("no turn besides the system prompt" in str(w) for w in result.warnings)
    assert not [f for f in preflight(result).findings if f.severity == "error"]


@pytest.mark.parametrize(
    ("provider", "body", "rule"),
    [
        ("anthropic", {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": []}, "messages-required"),
        ("gemini", {"contents": [], "systemInstruction": {"parts": [{"text": "x"}]}}, "contents-required"),
    ],
)
def test_preflight_calls_a_body_without_turns_an_error(provider: str, body: dict[str, Any], rule: str) -> None:
    model = "claude-sonnet-4-5" if provider == "anthropic" else "gemini-2.5-flash"
    assert rule in _errors(provider, body, model)
