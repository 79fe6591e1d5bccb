"""A history with tool calls and no tools given: the body carries tools inferred from the recorded calls, each
one a warning, and the capability report says how many calls they came from."""

from __future__ import annotations

import pytest

from core.preflight import capability_report
from core.providers import ToolSpec, dialect_names
from core.providers.inferred_tools import infer_tools
from tests.providers.builders import WEATHER, run, user
from tests.providers.cases import build


def test_tools_are_inferred_from_every_call_with_the_types_of_the_arguments_seen() -> None:
    from core.llm.messages import LLMAssistantMessage, LLMToolCall

    calls = (
        LLMToolCall("c1", "search", '{"q": "a", "limit": 3, "tags": ["x"]}'),
        LLMToolCall("c2", "search", '{"q": "b", "limit": "all"}'),
        LLMToolCall("c3", "noop", "not json"),
    )
    (search, noop) = infer_tools([LLMAssistantMessage(msg_id="a1", tool_calls=calls)])
    assert search.spec == ToolSpec(
        "search",
        parameters={
            "type": "object",
            "properties": {"q": {"type": "string"}, "limit": {}, "tags": {"type": "array"}},
        },
    )
    assert (search.calls, search.first_msg_id) == (2, "a1")
    assert noop.spec.parameters == {"type": "object", "properties": {}}


@pytest.mark.parametrize("dialect", dialect_names())
def test_a_tool_history_without_tools_gets_inferred_tools_and_says_so(dialect: str) -> None:
    result = build("tool_calls_parallel", dialect)
    assert result.tools_source == "inferred"
    assert [tool.name for tool in result.tools] == ["get_weather"]
    assert "tools" in result.body
    inferred = [w for w in result.warnings if w.element == "inferred_tool"]
    assert [w.msg_id for w in inferred] == ["a1"]
    assert "'get_weather' inferred from 2 recorded call(s)" in inferred[0].reason
    (entry,) = [u for u in capability_report(result).cannot_carry if u.kind == "tools"]
    assert entry.what_happens.startswith("tools inferred from 2 recorded calls")


def test_given_tools_are_sent_as_given_and_nothing_is_inferred() -> None:
    result = build("tools_choice_params", "openai")
    assert result.tools_source == "stored"
    assert not [w for w in result.warnings if w.element == "inferred_tool"]


def test_a_history_without_calls_gets_no_tools() -> None:
    result = run("anthropic", [user("Hello", 1)])
    assert (result.tools, result.tools_source) == ((), "none")
    assert "tools" not in result.body


def test_stored_tools_keep_their_source() -> None:
    result = run("openai", [user("Hello", 1)], tools=(WEATHER,), tools_source="given")
    assert result.tools_source == "given"


def test_an_empty_given_tool_list_sends_no_tools_and_infers_none() -> None:
    from tests.providers.cases import CASES

    messages, _ = CASES["tool_calls_parallel"]()
    result = run("openai", messages, tools=(), tools_source="given")
    assert (result.tools, result.tools_source) == ((), "given")
    assert "tools" not in result.body
    assert not [w for w in result.warnings if w.element == "inferred_tool"]
