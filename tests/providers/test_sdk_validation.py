"""Every produced body validates against the official SDKs' own request types, strictly (docs/providers.md 8).

The validators are strict mirrors (lazy Iterables forced, extra keys forbidden); the negative tests
below prove each one rejects the mistakes section 8 says a plain TypeAdapter lets through.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError

from core.preflight.sdk_types import validate_body
from core.providers import dialect_names, get_dialect
from tests.providers.cases import CASES, build


@pytest.mark.parametrize("dialect", dialect_names())
@pytest.mark.parametrize("case", list(CASES))
def test_body_validates_strictly(case: str, dialect: str) -> None:
    validate_body(get_dialect(dialect), build(case, dialect).body)


def _mutated(case: str, dialect: str, mutate: Any) -> dict[str, Any]:
    body = copy.deepcopy(build(case, dialect).body)
    mutate(body)
    return body


def _set(path: list[Any], value: Any) -> Any:
    def mutate(body: dict[str, Any]) -> None:
        node = body
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return mutate


def _drop(path: list[Any]) -> Any:
    def mutate(body: dict[str, Any]) -> None:
        node = body
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return mutate


# (dialect, case, mutation, what the SDK type must reject)
MISTAKES = [
    (
        "openai",
        "tool_calls_parallel",
        _set(["messages", 1, "tool_calls", 0, "function", "arguments"], {"a": 1}),
        "arguments as an object",
    ),
    (
        "openai",
        "image_url",
        _set(["messages", 0, "content", 0], {"type": "image", "source": {"url": "x"}}),
        "an Anthropic image block in an OpenAI message",
    ),
    ("openai", "reasoning_string", _set(["messages", 1, "reasoning_content"], "x"), "reasoning_content"),
    ("openai", "tool_calls_parallel", _drop(["messages", 2, "tool_call_id"]), "tool message without tool_call_id"),
    ("openai", "audio", _set(["messages", 0, "content", 0, "input_audio", "format"], "ogg"), "audio format ogg"),
    ("openai-responses", "image_url", _drop(["input", 0, "content", 0, "detail"]), "input_image without detail"),
    (
        "openai-responses",
        "user_text",
        _set(["input", 0, "content"], [{"type": "text", "text": "x"}]),
        "a Chat-style text part",
    ),
    ("openai-responses", "tool_calls_parallel", _drop(["input", 1, "call_id"]), "function_call without call_id"),
    (
        "anthropic",
        "tool_calls_parallel",
        _drop(["messages", 2, "content", 0, "tool_use_id"]),
        "tool_result without tool_use_id",
    ),
    ("anthropic", "reasoning_blocks", _drop(["messages", 1, "content", 0, "signature"]), "thinking without signature"),
    (
        "anthropic",
        "image_base64",
        _set(["messages", 0, "content", 1, "source", "media_type"], "image/bmp"),
        "image/bmp",
    ),
    (
        "anthropic",
        "tools_defined",
        _set(["tools", 0], {"type": "function", "function": {"name": "f"}}),
        "an OpenAI-shaped tool",
    ),
    ("anthropic", "user_text", _drop(["max_tokens"]), "a body without max_tokens"),
    (
        "anthropic",
        "reasoning_blocks",
        _set(["messages", 1, "content", 4, "input"], '{"city":"Paris"}'),
        "tool_use input as a string",
    ),
    ("anthropic", "user_text", _set(["messages", 0, "content", 0, "cache"], True), "an unknown key in a block"),
    ("gemini", "user_text", _set(["contents", 0, "parts", 0], {"type": "text", "text": "x"}), "an OpenAI-style part"),
    (
        "gemini",
        "tool_calls_parallel",
        _set(["contents", 1, "parts", 0, "functionCall", "args"], "{}"),
        "args as a JSON string",
    ),
    (
        "gemini",
        "tool_calls_parallel",
        _set(["contents", 2, "parts", 0, "functionResponse", "response"], "18C"),
        "functionResponse.response as a string",
    ),
    ("gemini", "user_text", _set(["contents", 1, "role"], "assistant"), "role assistant"),
    (
        "zhipu",
        "tool_calls_parallel",
        _set(["messages", 2, "content"], [{"type": "text", "text": "x"}]),
        "list-form tool content for GLM",
    ),
    ("doubao", "reasoning_string", _set(["messages", 1, "reasoning_content"], "x"), "reasoning_content for Ark"),
]


@pytest.mark.parametrize(("dialect", "case", "mutate", "what"), MISTAKES, ids=[m[3] for m in MISTAKES])
def test_validator_rejects_known_mistake(dialect: str, case: str, mutate: Any, what: str) -> None:
    body = _mutated(case, dialect, mutate)
    with pytest.raises((ValidationError, ValueError)):
        validate_body(get_dialect(dialect), body)
