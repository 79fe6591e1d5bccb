"""Temperature, top_p and stop sequences outside a provider's range: the builder clamps or cuts with a warning naming
the shared rule (``temperature-range``, ``top-p-range``, ``stop-sequences-count``, each with the dialect's source in
the catalogue), and preflight calls the unfixed body an error. Anthropic's thinking takes only the default
temperature and a top_p of 0.95 or more (``thinking-sampling``).

Oracles, each a provider's own statement of its range:
- OpenAI: openai SDK ``CompletionCreateParamsBase`` "temperature ... between 0 and 2", stop "Up to 4 sequences"
  (platform.openai.com/docs/api-reference/chat/create); 400 "3.0 is greater than the maximum of 2 - 'temperature'"
  (Frrrrrrrrank/auto_job__find__chatgpt__rpa#40).
- Anthropic: Messages API reference, temperature "Ranges from 0.0 to 1.0" (docs.claude.com/en/api/messages); 400
  "top_p: range: -1 or 0..1" (anthropics/anthropic-sdk-typescript#484); extended-thinking docs, feature compatibility.
- Gemini: GenerationConfig reference (ai.google.dev/api/generate-content#generationconfig): temperature [0.0, 2.0],
  stopSequences "up to 5".
- Zhipu: docs.z.ai/api-reference/llm/chat-completion: temperature [0.0, 1.0], top_p [0.01, 1.0], "only one stop word
  is supported".
- Doubao: volcengine-python-sdk ``volcenginesdkarkruntime/types/chat/completion_create_params.py`` (temperature
  "between 0 and 2", stop "Up to 4 sequences"); the Doubao chat API reference (developer.open-douyin.com, large model
  call): stop "最多支持 4 个字符串".
"""

from __future__ import annotations

from typing import Any

import pytest

from core.preflight import check_body
from core.preflight.catalogue import fixes
from core.providers import RequestOptions, RequestResult, provider_named
from tests.providers.builders import run, user

HELLO = [user("hello", 1)]
STOPS = ("a", "b", "c", "d", "e", "f")


def _fixed(result: RequestResult, rule: str) -> bool:
    found = [f for f in fixes(provider_named(result.dialect), result.warnings) if f.rule.id == rule]
    return bool(found) and all(f.rule.authority != "not in the catalogue" for f in found)


def _findings(provider: str, body: dict[str, Any], model: str) -> dict[str, str]:
    dialect = provider_named(provider)
    findings = check_body(dialect, body, dialect.profile(RequestOptions(model=model)), model)
    return {f.rule: f.severity for f in findings}


def _sampled(result: RequestResult) -> dict[str, Any]:
    """The sampling fields of a built body (Gemini holds them in generationConfig)."""
    return result.body.get("generationConfig", result.body)


# -- temperature above the provider's maximum --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("provider", "model", "asked", "sent"),
    [
        ("anthropic", "claude-sonnet-4-5", 1.5, 1.0),
        ("anthropic", "claude-3-5-haiku-20241022", 1.5, 1.0),
        ("openai", "gpt-4o", 2.5, 2.0),
        ("openai", "gpt-4.1", 2.5, 2.0),
        ("openai-responses", "gpt-4.1", 3.0, 2.0),
        ("gemini", "gemini-2.5-flash", 2.5, 2.0),
        ("gemini", "gemini-3-pro-preview", 2.5, 2.0),
        ("zhipu", "glm-4.5", 1.5, 1.0),
        ("zhipu", "glm-4.6", 1.5, 1.0),
        ("doubao", "doubao-seed-1-6", 2.5, 2.0),
    ],
)
def test_a_temperature_above_the_range_is_clamped_naming_its_rule(
    provider: str, model: str, asked: float, sent: float
) -> None:
    result = run(provider, HELLO, model=model, temperature=asked)
    assert _sampled(result)["temperature"] == sent
    assert _fixed(result, "temperature-range")


# -- top_p outside the provider's range ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("provider", "model", "asked", "sent", "key"),
    [
        ("anthropic", "claude-sonnet-4-5", 1.3, 1.0, "top_p"),
        ("openai", "gpt-4o", 1.5, 1.0, "top_p"),
        ("gemini", "gemini-2.5-flash", 1.2, 1.0, "topP"),
        ("zhipu", "glm-4.5", 0.0, 0.01, "top_p"),
        ("doubao", "doubao-seed-1-6", 1.5, 1.0, "top_p"),
    ],
)
def test_a_top_p_outside_the_range_is_clamped_naming_its_rule(
    provider: str, model: str, asked: float, sent: float, key: str
) -> None:
    result = run(provider, HELLO, model=model, top_p=asked)
    assert _sampled(result)[key] == sent
    assert _fixed(result, "top-p-range")


# -- more stop sequences than the provider takes ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("provider", "model", "key", "taken"),
    [
        ("openai", "gpt-4o", "stop", 4),
        ("gemini", "gemini-2.5-flash", "stopSequences", 5),
        ("gemini", "gemini-3-pro-preview", "stopSequences", 5),
        ("zhipu", "glm-4.5", "stop", 1),
        ("doubao", "doubao-seed-1-6", "stop", 4),
    ],
)
def test_stop_sequences_past_the_provider_limit_are_cut_naming_its_rule(
    provider: str, model: str, key: str, taken: int
) -> None:
    result = run(provider, HELLO, model=model, stop=STOPS)
    assert _sampled(result)[key] == list(STOPS[:taken])
    assert _fixed(result, "stop-sequences-count")


@pytest.mark.oracle_accepts
def test_values_within_the_range_are_sent_as_asked_without_a_fix() -> None:
    result = run("openai", HELLO, model="gpt-4o", temperature=2.0, top_p=1.0, stop=STOPS[:4])
    assert (result.body["temperature"], result.body["top_p"], result.body["stop"]) == (2.0, 1.0, list(STOPS[:4]))
    assert not fixes(provider_named("openai"), result.warnings)


# -- preflight on the bodies a user wrote ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("provider", "model", "body", "rule"),
    [
        ("anthropic", "claude-sonnet-4-5", {"max_tokens": 64, "temperature": 1.5}, "temperature-range"),
        ("anthropic", "claude-sonnet-4-5", {"max_tokens": 64, "top_p": 1.3}, "top-p-range"),
        ("openai", "gpt-4o", {"temperature": 2.5}, "temperature-range"),
        ("openai", "gpt-4o", {"stop": list(STOPS[:5])}, "stop-sequences-count"),
        ("openai-responses", "gpt-4.1", {"temperature": 3.0}, "temperature-range"),
        ("gemini", "gemini-2.5-flash", {"generationConfig": {"temperature": 2.5}}, "temperature-range"),
        ("gemini", "gemini-2.5-flash", {"generationConfig": {"stopSequences": list(STOPS)}}, "stop-sequences-count"),
        ("zhipu", "glm-4.5", {"temperature": 1.5}, "temperature-range"),
        ("zhipu", "glm-4.5", {"stop": ["a", "b"]}, "stop-sequences-count"),
        ("zhipu", "glm-4.5", {"top_p": 0.0}, "top-p-range"),
        ("doubao", "doubao-seed-1-6", {"stop": list(STOPS[:5])}, "stop-sequences-count"),
    ],
)
def test_preflight_calls_a_sampling_value_outside_the_range_an_error(
    provider: str, model: str, body: dict[str, Any], rule: str
) -> None:
    built = run(provider, HELLO, model=model).body
    assert _findings(provider, {**built, **body}, model).get(rule) == "error"


@pytest.mark.oracle_accepts
@pytest.mark.parametrize(
    ("provider", "model", "body"),
    [
        ("anthropic", "claude-sonnet-4-5", {"temperature": 1.0}),
        ("openai", "gpt-4o", {"temperature": 2.0, "stop": list(STOPS[:4])}),
        ("gemini", "gemini-2.5-flash", {"generationConfig": {"temperature": 2.0, "stopSequences": list(STOPS[:5])}}),
        ("zhipu", "glm-4.5", {"temperature": 1.0, "top_p": 0.01, "stop": ["a"]}),
    ],
)
def test_preflight_takes_sampling_values_at_the_ends_of_the_range(
    provider: str, model: str, body: dict[str, Any]
) -> None:
    built = run(provider, HELLO, model=model).body
    found = _findings(provider, {**built, **body}, model)
    assert not {"temperature-range", "top-p-range", "stop-sequences-count"} & found.keys()


# -- Anthropic: sampling with extended thinking, and temperature with top_p ----------------------------------------
# Oracle: extended-thinking docs, feature compatibility: "Thinking isn't compatible with temperature or top_k
# modifications"; top_p between 0.95 and 1. 400 "`temperature` and `top_p` cannot both be specified for this model"
# (BerriAI/litellm#15097).
def test_a_temperature_with_thinking_is_dropped_naming_its_rule() -> None:
    result = run("anthropic", HELLO, model="claude-sonnet-4-5", thinking=True, max_tokens=4096, temperature=0.5)
    assert "temperature" not in result.body and _fixed(result, "thinking-sampling")


def test_a_low_top_p_with_thinking_is_raised_naming_its_rule() -> None:
    result = run("anthropic", HELLO, model="claude-sonnet-4-5", thinking=True, max_tokens=4096, top_p=0.5)
    assert result.body["top_p"] == 0.95 and _fixed(result, "thinking-sampling")


def test_top_p_with_temperature_is_dropped_naming_its_rule() -> None:
    result = run("anthropic", HELLO, model="claude-sonnet-4-5", temperature=0.3, top_p=0.9)
    assert result.body["temperature"] == 0.3 and "top_p" not in result.body
    assert _fixed(result, "temperature-with-top-p")


@pytest.mark.parametrize(
    ("extra", "rule", "severity"),
    [
        ({"temperature": 0.5}, "thinking-sampling", "error"),
        ({"top_p": 0.5}, "thinking-sampling", "error"),
    ],
)
def test_preflight_calls_sampling_that_thinking_refuses_an_error(
    extra: dict[str, Any], rule: str, severity: str
) -> None:
    built = run("anthropic", HELLO, model="claude-sonnet-4-5", thinking=True, max_tokens=4096).body
    assert _findings("anthropic", {**built, **extra}, "claude-sonnet-4-5").get(rule) == severity


@pytest.mark.oracle_accepts
def test_preflight_warns_of_temperature_with_top_p_to_a_model_that_takes_both() -> None:
    """Claude 3.5 Haiku takes both (the 400 of litellm#15097 is the 4.5 models'): a warning, not an error."""
    built = run("anthropic", HELLO, model="claude-3-5-haiku-20241022").body
    found = _findings("anthropic", {**built, "temperature": 0.3, "top_p": 0.9}, "claude-3-5-haiku-20241022")
    assert found.get("temperature-with-top-p") == "warning"
