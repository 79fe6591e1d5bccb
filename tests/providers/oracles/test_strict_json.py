"""Every body is JSON (RFC 8259): NaN and Infinity in tool arguments travel as strings, with a warning.

Oracles: RFC 8259 section 6 ("Numeric values that cannot be represented ... such as Infinity and NaN are not
permitted"); OpenAI answers 400 "We could not parse the JSON body of your request" to a body holding them
(openai/openai-python#1387); Python's ``json.dumps`` writes them unless ``allow_nan=False``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import ToolCall, ToolReturn
from core.jsonio import dumps
from core.preflight import check_body
from core.preflight.catalogue import fixes
from core.providers import RequestOptions, dialect_names, provider_named
from tests.providers.builders import reply, run, tool, user

LITERALS = ("NaN", "Infinity", "-Infinity")


def _history(arguments: str) -> list[Any]:
    return [
        user("plot it", 1),
        reply("", 1, tool_calls=[ToolCall(id="call_1", name="plot", arguments=arguments)]),
        tool(1, ToolReturn(call_id="call_1", name="plot", result="done")),
    ]


def _floats(value: Any) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [f for item in value.values() for f in _floats(item)]
    if isinstance(value, list):
        return [f for item in value for f in _floats(item)]
    return []


def _refuse(literal: str) -> Any:
    raise ValueError(f"{literal} is not JSON")


def _argument_texts(value: Any) -> list[str]:
    """Arguments sent as text (OpenAI's ``function.arguments``): JSON inside the JSON."""
    if isinstance(value, dict):
        own = [value["arguments"]] if isinstance(value.get("arguments"), str) else []
        return own + [t for item in value.values() for t in _argument_texts(item)]
    if isinstance(value, list):
        return [t for item in value for t in _argument_texts(item)]
    return []


def _strict(body: dict[str, Any]) -> str:
    """The body as the wire carries it, refused by a strict encoder if it is not JSON."""
    text = dumps(body).decode()
    json.dumps(body, allow_nan=False)  # what Python's own encoder would have written
    for arguments in _argument_texts(body):
        json.loads(arguments, parse_constant=_refuse)
    return text


@pytest.mark.parametrize("dialect", dialect_names())
@pytest.mark.parametrize("literal", LITERALS)
def test_a_non_finite_argument_is_sent_as_a_string_with_a_warning(dialect: str, literal: str) -> None:
    result = run(dialect, _history(f'{{"x": {literal}, "n": 1}}'))
    text = _strict(result.body)
    assert f'"{literal}"' in text or f'\\"{literal}\\"' in text  # as an object's string, or inside the text
    assert any(literal in str(w) and "not JSON" in str(w) for w in result.warnings)


@pytest.mark.oracle_accepts  # a property of every built body (strict JSON), whether a draw needed a fix or not
@settings(max_examples=40, deadline=None)
@given(
    st.recursive(
        st.sampled_from([math.nan, math.inf, -math.inf]) | st.floats() | st.integers() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=8,
    ),
    st.sampled_from(dialect_names()),
)
def test_no_body_holds_a_non_finite_number(value: Any, dialect: str) -> None:
    arguments = json.dumps({"v": value})  # Python writes NaN/Infinity, as agents built on it do
    body = run(dialect, _history(arguments)).body
    _strict(body)
    assert all(math.isfinite(f) for f in _floats(body))


@pytest.mark.parametrize("dialect", dialect_names())
def test_the_non_finite_fix_names_its_rule(dialect: str) -> None:
    result = run(dialect, _history('{"x": NaN}'))
    found = [f for f in fixes(provider_named(dialect), result.warnings) if f.rule.id == "strict-json"]
    assert found and all(f.rule.authority != "not in the catalogue" for f in found)


@pytest.mark.parametrize(
    ("dialect", "body"),
    [
        (
            "anthropic",
            {
                "model": "claude-sonnet-4-5",
                "max_tokens": 64,
                "messages": [
                    {"role": "user", "content": "plot"},
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t1", "name": "plot", "input": {"x": math.nan}}],
                    },
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
                ],
            },
        ),
        (
            "openai",
            {
                "model": "gpt-4o",
                "messages": [
                    {"role": "user", "content": "plot"},
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {"id": "c1", "type": "function", "function": {"name": "plot", "arguments": '{"x": NaN}'}}
                        ],
                    },
                    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                ],
            },
        ),
        ("gemini", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {"topP": math.inf}}),
    ],
)
def test_preflight_calls_a_body_holding_a_non_finite_number_an_error(dialect: str, body: dict[str, Any]) -> None:
    provider = provider_named(dialect)
    model = body.get("model") or provider.default_model
    findings = check_body(provider, body, provider.profile(RequestOptions(model=model)), model)
    assert "strict-json" in {f.rule for f in findings if f.severity == "error"}
