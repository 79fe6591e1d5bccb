"""A request option the model cannot take is fixed with a warning naming its rule (so ``payload --report`` lists it
with its source), and preflight calls the unfixed body an error; a refused ``--effort`` names its rule too. Each
case names its oracle; the model table decides which model takes what."""

from __future__ import annotations

from typing import Any

import pytest

from core.models.reasoning import effort_refusal
from core.preflight import check_body
from core.preflight.catalogue import fixes
from core.providers import RequestOptions, RequestResult, provider_named
from tests.providers.builders import run, user

HELLO = [user("hello", 1)]


def _fixed(result: RequestResult, rule: str) -> bool:
    found = [f for f in fixes(provider_named(result.dialect), result.warnings) if f.rule.id == rule]
    return bool(found) and all(f.rule.authority != "not in the catalogue" for f in found)


def _errors(provider: str, body: dict[str, Any], model: str) -> list[str]:
    dialect = provider_named(provider)
    findings = check_body(dialect, body, dialect.profile(RequestOptions(model=model)), model)
    return [f.rule for f in findings if f.severity == "error"]


# -- temperature and top_p to a model that refuses them ---------------------------------------------------------
# Oracle: Anthropic 400 "`temperature` is deprecated for this model" (Claude Opus 4.7 and later; LiteLLM
# supports_sampling_params false); OpenAI reasoning models 400 "Unsupported parameter: 'temperature'" (pydantic-ai
# openai_unsupported_model_settings).
@pytest.mark.parametrize(
    ("provider", "model", "rule"),
    [
        ("anthropic", "claude-opus-4-7", "sampling-params"),
        ("anthropic", "claude-sonnet-5", "sampling-params"),
        ("openai", "o3-mini", "reasoning-model-params"),
        ("openai-responses", "gpt-5", "reasoning-model-params"),
    ],
)
def test_a_temperature_the_model_refuses_is_dropped_naming_its_rule(provider: str, model: str, rule: str) -> None:
    result = run(provider, HELLO, model=model, temperature=0.3, top_p=0.9)
    assert "temperature" not in result.body and "top_p" not in result.body
    assert _fixed(result, rule)


@pytest.mark.parametrize(
    ("model", "refused"),
    [("claude-opus-4-7", True), pytest.param("claude-sonnet-4-5", False, marks=pytest.mark.oracle_accepts)],
)
def test_preflight_calls_a_temperature_to_an_anthropic_model_without_sampling_an_error(
    model: str, refused: bool
) -> None:
    body = {"model": model, "max_tokens": 1024, "temperature": 0.3, "messages": [{"role": "user", "content": "hi"}]}
    assert ("sampling-params" in _errors("anthropic", body, model)) is refused


# -- thinking asked of a model that has none, or off for one that cannot stop ----------------------------------
# Oracle: Anthropic extended-thinking docs, supported models (Claude 3.5 Haiku has none: a thinking parameter is a
# 400); Gemini thinking docs: 2.5 Pro "cannot turn off thinking" (thinkingBudget 0 is refused).
def test_thinking_asked_of_a_claude_without_it_is_not_sent_naming_its_rule() -> None:
    result = run("anthropic", HELLO, model="claude-3-5-haiku-20241022", thinking=True)
    assert "thinking" not in result.body and _fixed(result, "thinking-mode")


def test_thinking_off_for_gemini_2_5_pro_sends_its_smallest_budget_naming_its_rule() -> None:
    result = run("gemini", HELLO, model="gemini-2.5-pro", thinking=False)
    assert result.body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 128}
    assert _fixed(result, "thinking-config")


# -- --effort refused by the model table ----------------------------------------------------------------------
# Oracle: OpenAI 400 "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model" (LiteLLM:
# gpt-5.1 supports_minimal_reasoning_effort false); 400 "Unsupported parameter: 'reasoning.effort' is not supported
# with this model" for GPT-5 Chat (Laisky/one-api#120).
@pytest.mark.parametrize(
    ("provider", "model", "effort", "rule"),
    [
        ("openai", "gpt-5.1", "minimal", "reasoning-effort-level"),
        ("openai-responses", "gpt-5-chat-latest", "high", "reasoning-model-params"),
    ],
)
def test_a_refused_effort_names_its_rule(provider: str, model: str, effort: str, rule: str) -> None:
    refusal = effort_refusal(provider_named(provider), model, effort)
    assert refusal is not None and f"rule {rule}" in refusal
