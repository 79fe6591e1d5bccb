"""Tool choice and sampling parameters: each provider gets them in its form and range, and what it refuses is
left out with a warning that names the parameter (the well-formed bodies are the golden case tools_choice_params)."""

from __future__ import annotations

from typing import Any

import pytest

from core.providers import GenerationParams, NamedToolChoice, RequestOptions
from tests.providers.builders import WEATHER, run, user

HELLO = [user("Hello", 1)]


def _elements(dialect: str, **options: Any) -> tuple[dict[str, Any], list[str]]:
    result = run(dialect, HELLO, **options)
    return result.body, [w.element for w in result.warnings]


@pytest.mark.parametrize(
    ("dialect", "choice", "sent"),
    [
        ("anthropic", "required", {"type": "any"}),
        ("anthropic", "none", {"type": "none"}),
        ("openai", "required", "required"),
        ("openai-responses", NamedToolChoice("get_weather"), {"type": "function", "name": "get_weather"}),
        ("doubao", "none", "none"),
    ],
)
def test_tool_choice_is_sent_in_the_provider_form(dialect: str, choice: Any, sent: Any) -> None:
    body, _ = _elements(dialect, tools=(WEATHER,), tool_choice=choice)
    assert body["tool_choice"] == sent


def test_gemini_tool_choice_is_a_function_calling_mode() -> None:
    body, _ = _elements("gemini", tools=(WEATHER,), tool_choice="none")
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}


@pytest.mark.parametrize("dialect", ["anthropic", "openai", "gemini"])
def test_a_forced_tool_choice_without_tools_is_not_sent_and_said(dialect: str) -> None:
    body, elements = _elements(dialect, tool_choice="required")
    assert "tool_choice" not in body and "toolConfig" not in body
    assert elements == ["tool_choice"]


def test_a_tool_choice_naming_no_tool_is_not_sent_and_said() -> None:
    body, elements = _elements("openai", tools=(WEATHER,), tool_choice=NamedToolChoice("lookup"))
    assert "tool_choice" not in body
    assert elements == ["tool_choice"]


def test_anthropic_with_thinking_drops_temperature_and_a_forced_choice() -> None:
    body, elements = _elements(
        "anthropic", thinking=True, tools=(WEATHER,), tool_choice="required", temperature=0.5, top_p=0.5
    )
    assert body["tool_choice"] == {"type": "auto"}
    assert "temperature" not in body
    assert body["top_p"] == 0.95  # the least top_p Anthropic takes while thinking
    assert sorted(elements) == ["temperature", "tool_choice", "top_p"]


def test_anthropic_with_thinking_keeps_the_default_temperature_it_accepts() -> None:
    body, elements = _elements("anthropic", model="claude-sonnet-4-5", thinking=True, temperature=1.0)
    assert body["temperature"] == 1.0
    assert elements == []


def test_anthropic_models_that_deprecated_sampling_get_none() -> None:
    body, elements = _elements("anthropic", model="claude-opus-4-7", temperature=0.2)
    assert "temperature" not in body
    assert elements == ["temperature"]


@pytest.mark.parametrize("dialect", ["openai", "openai-responses"])
def test_openai_reasoning_models_get_no_sampling_parameters(dialect: str) -> None:
    body, elements = _elements(dialect, model="o3", temperature=0.2, top_p=0.5)
    assert "temperature" not in body and "top_p" not in body
    assert sorted(elements) == ["temperature", "top_p"]


def test_zhipu_takes_one_stop_word() -> None:
    body, elements = _elements("zhipu", stop=("END", "STOP"))
    assert body["stop"] == ["END"]
    assert elements == ["stop"]


def test_given_parameters_go_over_the_stored_and_false_or_zero_count_as_given() -> None:
    stored = GenerationParams(max_tokens=100, temperature=0.7, stop=("END",), thinking=True, effort="high")
    given = GenerationParams(temperature=0.0, thinking=False)
    assert given.over(stored) == GenerationParams(
        max_tokens=100, temperature=0.0, stop=("END",), thinking=False, effort="high"
    )
    assert GenerationParams(stop=("STOP",)).over(stored).stop == ("STOP",)


def test_request_options_carry_their_parameters_by_name() -> None:
    params = GenerationParams(max_tokens=5, top_p=0.5, stop=("x",), effort="low")
    options = RequestOptions(model="m", **params.by_name())
    assert options.params == params and options.model == "m"
