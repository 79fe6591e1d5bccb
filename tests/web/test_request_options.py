"""The request options' one spec: every field read through it, each kind checked, max tokens against the model
table, and a value from the query escaped wherever a page shows it."""

from __future__ import annotations

import pytest

from core.providers import GenerationParams
from web.request_options import OPTIONS, ModelLimit, model_limit, options_form, read_options


def test_every_kind_is_read_and_a_blank_field_is_not_given() -> None:
    asked = read_options(
        {"max_tokens": " 300 ", "temperature": "0.7", "top_p": "", "stop": "END\n\\n\n", "thinking": "off",
         "tools_source": "none"}
    )  # fmt: skip
    assert asked.errors == () and asked.applied
    assert asked.params == GenerationParams(max_tokens=300, temperature=0.7, stop=("END", "\n"), thinking=False)
    assert asked.tools == "none"
    assert [name for name, _ in asked.texts] == ["max_tokens", "temperature", "stop", "thinking", "tools_source"]
    assert not read_options({}).given and read_options({}).key == ()


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("max_tokens", "0", "max tokens: 0 is out of range (1 to 2,147,483,647)"),
        ("max_tokens", "1e3", "max tokens: a whole number from 1 to 2,147,483,647"),
        ("temperature", "nan", "temperature: a number from 0 to 2"),
        ("temperature", "2.5", "temperature: 2.5 is out of range (0 to 2)"),
        ("top_p", "-0.1", "top_p: -0.1 is out of range (0 to 1)"),
        ("stop", "\n".join(f"s{i}" for i in range(17)), "stop sequences: at most 16 stop sequences, not 17"),
        ("thinking", "maybe", "thinking: one of on, off (blank: as recorded)"),
        ("tools_source", "given", "tools sent: one of stored, inferred, none (blank: as recorded)"),
    ],
)
def test_a_value_out_of_its_range_is_refused_naming_the_field(name: str, text: str, said: str) -> None:
    asked = read_options({name: text})
    assert [(e.name, e.message) for e in asked.errors] == [(name, said)]
    assert not asked.applied and asked.key == ()


def test_max_tokens_is_bounded_by_a_known_models_output_limit_only() -> None:
    known = model_limit("anthropic", "claude-sonnet-4-5")
    assert known.text == "max 64,000 for claude-sonnet-4-5"
    (error,) = read_options({"max_tokens": "64001"}, (known,)).errors
    assert error.message.startswith("max tokens: 64,001 is above 64,000, the output limit of claude-sonnet-4-5")
    unknown = model_limit("anthropic", "claude-unknown-model-9")
    assert unknown.max_output_tokens is None  # the stand-in facts say nothing about it
    assert read_options({"max_tokens": "999999"}, (unknown,)).applied


def test_the_form_has_one_field_per_option_with_the_recorded_value_and_the_limit() -> None:
    limit = ModelLimit("anthropic", "m", 100, "table")
    form = options_form(read_options({"temperature": "9"}), GenerationParams(max_tokens=50, stop=("a\nb",)), (limit,))
    assert [f.spec.name for f in form.fields] == [spec.name for spec in OPTIONS]
    by_name = {f.spec.name: f for f in form.fields}
    assert (by_name["max_tokens"].recorded, by_name["max_tokens"].limit) == ("50", "max 100 for m")
    assert by_name["stop"].recorded == "a\\nb"
    assert by_name["temperature"].error == "temperature: 9 is out of range (0 to 2)"


def test_an_effort_the_model_does_not_take_is_refused_naming_the_model_and_the_levels_it_takes() -> None:
    refused = read_options({"effort": "minimal"}, [model_limit("openai", "gpt-5.1")])
    assert [e.name for e in refused.errors] == ["effort"]
    assert "gpt-5.1 takes --effort none, low, medium, high, not 'minimal'" in refused.errors[0].message
    taken = read_options({"effort": "high"}, [model_limit("openai", "gpt-5.1")])
    assert taken.applied and taken.params == GenerationParams(effort="high")
    assert taken.cli_args() == ["--effort", "high"]
