"""Turn rules that depend on the model, read from the model table: the reasoning efforts a model takes, thinking
sent to a model that does not think, a system instruction to a model that takes none, and thinking with a prefill.

Each case states its oracle (a provider's documented 400 or a peer's fix) and checks both sides: the builder
makes the body valid with a warning naming the rule, and preflight reports a body built elsewhere."""

from __future__ import annotations

from typing import Any

import pytest

from core import BaseMessage
from core.preflight import check_body, preflight
from core.providers import RequestOptions, provider_named
from tests.providers.builders import reply, run, signed, user


def _errors(provider: str, body: dict[str, Any], model: str) -> list[str]:
    dialect = provider_named(provider)
    found = check_body(dialect, body, dialect.profile(RequestOptions(model=model)), model)
    return [f.rule for f in found if f.severity == "error"]


def _rules(result: Any) -> list[str | None]:
    return [w.rule for w in result.warnings]


def _effort(body: dict[str, Any]) -> object:
    return body["reasoning"]["effort"] if "reasoning" in body else body.get("reasoning_effort")


HELLO = [user("hello", 1)]
OPENAI = ["openai", "openai-responses"]


# Oracle: OpenAI 400 "Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported
# values are: 'minimal', 'low', 'medium', and 'high'." (Kilo-Org/cloud#3807); which model takes which level is
# LiteLLM's supports_<level>_reasoning_effort (gpt-5.4-pro, gpt-5.5-pro: none false; gpt-5.5-pro: low false too).
@pytest.mark.parametrize("provider", OPENAI)
@pytest.mark.parametrize(
    ("model", "sent"), [("gpt-5.4-pro", "low"), ("gpt-5.2-pro", "minimal"), ("gpt-5.5-pro", "medium")]
)
def test_thinking_off_on_a_model_that_cannot_stop_reasoning_sends_its_lowest_effort(
    provider: str, model: str, sent: str
) -> None:
    result = run(provider, HELLO, model=model, thinking=False)
    assert _effort(result.body) == sent
    assert "reasoning-effort-level" in _rules(result)
    assert not [f for f in preflight(result).findings if f.severity == "error"]


@pytest.mark.parametrize("provider", OPENAI)
@pytest.mark.parametrize(("model", "asked", "sent"), [("gpt-5", "none", "minimal"), ("gpt-5.1", "minimal", "low")])
def test_an_effort_the_model_does_not_take_moves_to_the_nearest_it_takes(
    provider: str, model: str, asked: str, sent: str
) -> None:
    result = run(provider, HELLO, model=model, effort=asked)
    assert _effort(result.body) == sent
    assert any(w.rule == "reasoning-effort-level" and repr(asked) in w.reason for w in result.warnings)


@pytest.mark.oracle_accepts
@pytest.mark.parametrize("provider", OPENAI)
@pytest.mark.parametrize("model", ["gpt-5.1", "gpt-5.4"])
def test_a_model_that_takes_effort_none_gets_it_without_a_warning(provider: str, model: str) -> None:
    result = run(provider, HELLO, model=model, thinking=False)
    assert _effort(result.body) == "none"
    assert "reasoning-effort-level" not in _rules(result)


@pytest.mark.parametrize(
    ("model", "effort", "refused"),
    [
        ("gpt-5.4-pro", "none", True),
        ("gpt-5.1", "minimal", True),
        ("gpt-5", "none", True),
        pytest.param("gpt-5.1", "none", False, marks=pytest.mark.oracle_accepts),
    ],
)
def test_preflight_reports_an_effort_the_model_table_says_the_model_refuses(
    model: str, effort: str, refused: bool
) -> None:
    chat = {"model": model, "messages": [{"role": "user", "content": "hi"}], "reasoning_effort": effort}
    responses = {"model": model, "input": [{"role": "user", "content": "hi"}], "reasoning": {"effort": effort}}
    assert ("reasoning-effort-level" in _errors("openai", chat, model)) is refused
    assert ("reasoning-effort-level" in _errors("openai-responses", responses, model)) is refused


# Oracle: a model without reasoning answers 400 to a reasoning parameter (OpenAI "reasoning_effort is not supported
# with this model"); LiteLLM says supports_reasoning false for gpt-audio, and lists gpt-5-search-api without it.
@pytest.mark.parametrize("provider", OPENAI)
@pytest.mark.parametrize("model", ["gpt-audio", "gpt-5-search-api"])
def test_effort_is_not_sent_to_a_model_the_table_says_does_not_reason(provider: str, model: str) -> None:
    result = run(provider, HELLO, model=model, effort="high")
    assert _effort(result.body) is None
    assert "reasoning-model-params" in _rules(result)


# Oracle: Gemini 400 "Thinking is not enabled for models/gemini-2.0-flash-preview-image-generation"
# (lobehub/lobehub#7985); Gemma 3 has no thinking (LiteLLM lists gemma-3-27b-it without supports_reasoning).
@pytest.mark.parametrize("thinking", [True, False])
@pytest.mark.parametrize("model", ["gemma-3-27b-it", "gemini-2.0-flash"])
def test_no_thinking_config_goes_to_a_gemini_model_that_does_not_think(model: str, thinking: bool) -> None:
    result = run("gemini", HELLO, model=model, thinking=thinking)
    assert "thinkingConfig" not in result.body.get("generationConfig", {})
    assert not [f for f in preflight(result).findings if f.severity == "error"]


def test_the_table_rule_names_its_fix_for_gemma() -> None:
    assert "thinking-supported" in _rules(run("gemini", HELLO, model="gemma-3-27b-it", thinking=True))


def test_preflight_reports_a_thinking_config_for_a_model_that_does_not_think() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}}  # fmt: skip
    assert "thinking-supported" in _errors("gemini", body, "gemma-3-27b-it")
    assert "thinking-supported" not in _errors("gemini", body, "gemini-2.5-flash")


# Oracle: Gemini 400 "Developer instruction is not enabled for models/gemma-3-27b-it" (0xPlaygrounds/rig#788,
# QuantumNous/new-api#989); LiteLLM model map: gemma-3-27b-it supports_system_messages false.
SYSTEM = BaseMessage(role="system", content="Answer in French.", msg_id="s1", create_ts=1)


@pytest.mark.parametrize("model", ["gemma-3-27b-it", "gemini-omni-1.2-flash"])
def test_a_system_prompt_is_folded_into_the_first_user_turn_for_a_model_that_takes_none(model: str) -> None:
    result = run("gemini", [SYSTEM, user("hello", 1)], model=model)
    assert "systemInstruction" not in result.body
    first = result.body["contents"][0]
    assert first["role"] == "user" and first["parts"][0]["text"] == "Answer in French."
    assert [p["text"] for p in first["parts"]][-1] == "hello"
    assert "system-instruction-supported" in _rules(result)
    assert not [f for f in preflight(result).findings if f.severity == "error"]


@pytest.mark.oracle_accepts
def test_a_model_that_takes_a_system_instruction_keeps_it() -> None:
    result = run("gemini", [SYSTEM, user("hello", 1)], model="gemini-2.5-flash")
    assert result.body["systemInstruction"] == {"parts": [{"text": "Answer in French."}]}
    assert "system-instruction-supported" not in _rules(result)


def test_preflight_reports_a_system_instruction_for_gemma() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "systemInstruction": {"parts": [{"text": "x"}]}}
    assert "system-instruction-supported" in _errors("gemini", body, "gemma-3-27b-it")
    assert "system-instruction-supported" not in _errors("gemini", body, "gemini-2.5-flash")


# Oracle: Anthropic 400 "messages.1.content.0.type: Expected thinking or redacted_thinking, but found text. When
# thinking is enabled, a final assistant message must start with a thinking block" (n8n-io/n8n#22550 on Opus 4.5,
# router-for-me/CLIProxyAPI#1109); the error says to disable thinking, as this build does for a prefill.
PREFILL = [user("Write a haiku", 1), reply("Autumn", 1)]


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-opus-4-5"])
def test_thinking_is_switched_off_for_a_prefill_that_starts_with_text(model: str) -> None:
    result = run("anthropic", PREFILL, model=model, thinking=True)
    assert result.body["thinking"] == {"type": "disabled"}
    assert result.body["messages"][-1]["role"] == "assistant"
    assert "thinking-on-final-assistant-turn" in _rules(result)
    assert not [f for f in preflight(result).findings if f.severity == "error"]


@pytest.mark.oracle_accepts
def test_a_prefill_that_starts_with_signed_thinking_keeps_thinking_on() -> None:
    history = [user("Write a haiku", 1), reply("Autumn", 1, reasoning_content=signed("count syllables", "sig"))]
    result = run("anthropic", history, model="claude-sonnet-4-5", thinking=True)
    assert result.body["thinking"]["type"] == "enabled"
    assert "thinking-on-final-assistant-turn" not in _rules(result)


def test_preflight_reports_thinking_with_a_prefill_that_starts_with_text() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Write a haiku"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Autumn"}]},
        ],
    }
    assert "thinking-on-final-assistant-turn" in _errors("anthropic", body, "claude-sonnet-4-5")
    body["thinking"] = {"type": "disabled"}
    assert "thinking-on-final-assistant-turn" not in _errors("anthropic", body, "claude-sonnet-4-5")
