"""Tool lists and tool choices in every provider's shape read into the neutral one; bad ones name their field."""

from __future__ import annotations

from typing import Any

import pytest

from core.providers.base import NamedToolChoice, ToolSpec
from core.request_context import RequestFieldError, read_tool_choice, read_tools

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
LOOKUP = ToolSpec(name="lookup", description="Find a city", parameters=SCHEMA)

SHAPES: dict[str, Any] = {
    "neutral": [{"name": "lookup", "description": "Find a city", "parameters": SCHEMA}],
    "openai_chat": [
        {"type": "function", "function": {"name": "lookup", "description": "Find a city", "parameters": SCHEMA}}
    ],
    "openai_responses": [
        {"type": "function", "name": "lookup", "description": "Find a city", "parameters": SCHEMA, "strict": False}
    ],
    "anthropic": [{"name": "lookup", "description": "Find a city", "input_schema": SCHEMA}],
    "gemini": [
        {
            "functionDeclarations": [
                {
                    "name": "lookup",
                    "description": "Find a city",
                    "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]},
                }
            ]
        }
    ],
    "gemini_snake_case": [
        {"function_declarations": [{"name": "lookup", "description": "Find a city", "parameters": SCHEMA}]}
    ],
    "a_request_body": {
        "model": "gpt-4o",
        "tools": [
            {"type": "function", "function": {"name": "lookup", "description": "Find a city", "parameters": SCHEMA}}
        ],
    },
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_shape_reads_into_the_same_neutral_tool(shape: str) -> None:
    assert read_tools(SHAPES[shape]) == (LOOKUP,)


def test_a_tool_without_parameters_takes_an_empty_object_schema() -> None:
    (tool,) = read_tools([{"name": "now"}])
    assert tool.parameters == {"type": "object", "properties": {}}
    assert tool.description == ""


def test_a_gemini_tool_holding_several_declarations_gives_each_a_tool() -> None:
    tools = read_tools([{"functionDeclarations": [{"name": "a"}, {"name": "b"}]}, {"name": "c"}])
    assert [t.name for t in tools] == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("tools", "field", "words"),
    [
        ([{"name": "x", "parameters": {"type": "string"}}], "tools[0].parameters.type", "object"),
        ([{"name": "x", "input_schema": ["type"]}], "tools[0].input_schema", "JSON Schema object"),
        ([{"name": "x", "parameters": {"type": "object", "properties": 3}}], "tools[0].parameters.properties", ""),
        ([{"name": "x", "parameters": {"type": "object", "required": "a"}}], "tools[0].parameters.required", ""),
        ([{"name": "x"}, {"type": "function", "function": {"name": "x"}}], "tools[1].name", "defined twice"),
        ([{"functionDeclarations": [{"name": "x"}, {"name": "x"}]}], "tools[0].functionDeclarations[1].name", "twice"),
        ([{"description": "no name"}], "tools[0].name", "needs a name"),
        ([{"type": "web_search_20250305", "name": "web_search"}], "tools[0].type", "not a function tool"),
        ([3], "tools[0]", "JSON object"),
        ("lookup", "tools", "JSON array"),
    ],
)
def test_a_bad_tool_list_is_refused_naming_the_field(tools: Any, field: str, words: str) -> None:
    with pytest.raises(RequestFieldError) as caught:
        read_tools(tools)
    assert caught.value.field == field
    assert words in caught.value.reason


@pytest.mark.parametrize(
    ("given", "choice"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ({"name": "lookup"}, NamedToolChoice("lookup")),
        ({"type": "function", "function": {"name": "lookup"}}, NamedToolChoice("lookup")),
        ({"type": "function", "name": "lookup"}, NamedToolChoice("lookup")),
        ({"type": "any"}, "required"),
        ({"type": "tool", "name": "lookup"}, NamedToolChoice("lookup")),
        ({"mode": "ANY", "allowedFunctionNames": ["lookup"]}, NamedToolChoice("lookup")),
        ({"mode": "AUTO"}, "auto"),
    ],
)
def test_every_shape_of_tool_choice_reads_into_the_neutral_one(given: Any, choice: Any) -> None:
    assert read_tool_choice(given) == choice


@pytest.mark.parametrize("given", ["sometimes", 1, {"type": "function", "function": {"name": ""}}, {}])
def test_a_bad_tool_choice_is_refused_naming_the_field(given: Any) -> None:
    with pytest.raises(RequestFieldError) as caught:
        read_tool_choice(given)
    assert caught.value.field.startswith("tool_choice")
