"""The OpenAI dialects' reasoning parameters, by model."""

from __future__ import annotations

from typing import Any

import pytest

from tests.providers.builders import run, user


@pytest.mark.parametrize(
    ("dialect", "model", "on", "off"),
    [
        ("openai", "o3-mini", {"reasoning_effort": "medium"}, {"reasoning_effort": "low"}),
        ("openai", "gpt-5", {"reasoning_effort": "medium"}, {"reasoning_effort": "minimal"}),
        ("openai", "gpt-4.1", {}, {}),
        ("openai-responses", "gpt-5.1", {"reasoning": {"effort": "medium"}}, {"reasoning": {"effort": "none"}}),
        ("openai-responses", "gpt-4o", {}, {}),
    ],
)
def test_openai_reasoning_parameters_go_to_reasoning_models_only(
    dialect: str, model: str, on: dict[str, Any], off: dict[str, Any]
) -> None:
    """pydantic-ai profiles/openai.py: reasoning models take reasoning_effort and no sampling settings; others
    reject reasoning_effort."""
    for thinking, expected in ((True, on), (False, off)):
        body = run(dialect, [user("hi", 1)], thinking=thinking, model=model, max_tokens=100).body
        assert {k: body[k] for k in ("reasoning_effort", "reasoning") if k in body} == expected
        assert "temperature" not in body and "max_tokens" not in body
