"""Options fitted to the model: a max_tokens above the model's output limit is cut, with a warning.

Oracles: Anthropic answers 400 "max_tokens: 999999 > 64000, which is the maximum allowed number of output tokens
for claude-sonnet-4-5-20250929" (https://docs.anthropic.com/en/api/errors, invalid_request_error); OpenAI answers
400 "max_tokens is too large: 999999. This model supports at most 32768 completion tokens" (BerriAI/litellm#6126).
"""

from __future__ import annotations

import pytest

from core import TextMessage
from core.providers import ChatLLM, RequestOptions, provider_named


def _build(provider: str, model: str, max_tokens: int | None) -> tuple[dict[str, object], list[str]]:
    result = ChatLLM(provider_named(provider), RequestOptions(model=model, max_tokens=max_tokens))
    built = result.construct_request_params([TextMessage(content="hi", msg_id="u1")])
    return built.body, [str(w) for w in built.warnings]


@pytest.mark.parametrize(
    ("provider", "model", "field", "limit"),
    [
        ("anthropic", "claude-sonnet-4-5", ("max_tokens",), 64_000),
        ("anthropic", "claude-3-5-haiku", ("max_tokens",), 8_192),
        ("openai", "gpt-4.1", ("max_completion_tokens",), 32_768),
        ("openai-responses", "o3", ("max_output_tokens",), 100_000),
        ("gemini", "gemini-2.5-flash", ("generationConfig", "maxOutputTokens"), 65_536),
        ("doubao", "doubao-seed-1-6", ("max_tokens",), 16_000),
    ],
)
def test_max_tokens_above_the_models_output_limit_is_sent_as_the_limit_with_a_warning(
    provider: str, model: str, field: tuple[str, ...], limit: int
) -> None:
    body, warnings = _build(provider, model, 999_999)
    value: object = body
    for key in field:
        assert isinstance(value, dict)
        value = value.get(key)
    assert value == limit
    assert any("max_tokens 999,999 is above the output limit" in w and f"{limit:,}" in w for w in warnings)


def test_max_tokens_within_the_limit_is_sent_as_given_without_a_warning() -> None:
    body, warnings = _build("anthropic", "claude-sonnet-4-5", 1_000)
    assert body["max_tokens"] == 1_000
    assert not any("max_tokens" in w for w in warnings)


def test_an_unknown_model_is_not_cut_to_a_stand_ins_limit() -> None:
    body, warnings = _build("anthropic", "claude-from-the-future", 500_000)
    assert body["max_tokens"] == 500_000
    assert not any("output limit" in w for w in warnings)
