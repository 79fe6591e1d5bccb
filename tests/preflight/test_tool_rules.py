"""Preflight's tool rules: tool blocks without tools (Anthropic), a tool choice without tools or naming an undefined
tool, and broken tool names and schemas, each reported at the node that breaks it (the card of its message)."""

from __future__ import annotations

from typing import Any

import pytest

from core.preflight import preflight
from core.providers import RequestResult, dialect_names
from tests.providers.cases import build


def _rules(result: RequestResult) -> dict[str, list[str | None]]:
    out: dict[str, list[str | None]] = {}
    for finding in preflight(result).findings:
        out.setdefault(finding.rule, []).append(finding.msg_id)
    return out


def test_anthropic_tool_blocks_without_tools_are_an_error_on_the_first_tool_block() -> None:
    result = build("tool_calls_parallel", "anthropic")
    del result.body["tools"]
    findings = [f for f in preflight(result).findings if f.rule == "tool-blocks-need-tools"]
    assert [(f.severity, f.msg_id, f.pointer) for f in findings] == [("error", "a1", "/messages/1/content/0")]
    assert "must define tools" in findings[0].authority


@pytest.mark.parametrize("dialect", dialect_names())
def test_a_built_tool_history_passes_the_tool_rules(dialect: str) -> None:
    """The inferred tools make every built tool history one its provider takes."""
    rules = _rules(build("tool_calls_parallel", dialect))
    assert not {"tool-blocks-need-tools", "tool-choice-needs-tools", "forced-tool-defined"} & set(rules)


CHOICE_AT = {
    "anthropic": ("tool_choice", {"type": "tool", "name": "lookup"}),
    "openai": ("tool_choice", {"type": "function", "function": {"name": "lookup"}}),
    "openai-responses": ("tool_choice", {"type": "function", "name": "lookup"}),
    "gemini": ("toolConfig", {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["lookup"]}}),
}


@pytest.mark.parametrize("dialect", sorted(CHOICE_AT))
def test_a_forced_tool_that_is_not_defined_is_an_error(dialect: str) -> None:
    result = build("tools_choice_params", dialect)
    key, value = CHOICE_AT[dialect]
    result.body[key] = value
    assert "forced-tool-defined" in _rules(result)


@pytest.mark.parametrize("dialect", sorted(CHOICE_AT))
def test_a_forced_tool_choice_without_tools_is_an_error(dialect: str) -> None:
    result = build("user_text", dialect)
    key, value = CHOICE_AT[dialect]
    result.body[key] = value
    assert "tool-choice-needs-tools" in _rules(result)


def _tools(dialect: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    if dialect == "gemini":
        declarations: list[dict[str, Any]] = body["tools"][0]["functionDeclarations"]
        return declarations
    if dialect == "openai":
        return [tool["function"] for tool in body["tools"]]
    tools: list[dict[str, Any]] = body["tools"]
    return tools


@pytest.mark.parametrize("dialect", ["anthropic", "openai", "openai-responses", "gemini"])
def test_a_duplicate_or_malformed_tool_name_is_an_error(dialect: str) -> None:
    result = build("tools_choice_params", dialect)
    tools = _tools(dialect, result.body)
    tools[1]["name"] = tools[0]["name"]
    assert "unique-tool-names" in _rules(result)
    tools[1]["name"] = "has space"
    assert "tool-name-pattern" in _rules(result)


def test_openai_parameters_that_are_not_an_object_schema_are_an_error() -> None:
    result = build("tools_choice_params", "openai")
    result.body["tools"][0]["function"]["parameters"] = {"type": "string"}
    assert "tool-schema-object" in _rules(result)
