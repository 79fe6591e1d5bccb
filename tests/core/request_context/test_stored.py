"""A stored request context: read and checked field by field, written back neutral, turned into request options."""

from __future__ import annotations

from typing import Any

import pytest

import core.request_context
from core.providers.base import GenerationParams, NamedToolChoice, RequestOptions, ToolSpec
from core.request_context import RequestFieldError, StoredRequest, read_request, request_json, to_options
from core.request_context.stored import params_json

LINE: dict[str, Any] = {
    "conversation_id": "C",
    "turn": "u1",
    "provider": "anthropic",
    "model": "claude-sonnet-4-5",
    "tools": [{"name": "lookup", "description": "Find", "input_schema": {"type": "object", "properties": {}}}],
    "tool_choice": {"name": "lookup"},
    "params": {"max_tokens": 1024, "temperature": 0.2, "top_p": 0.9, "stop": ["END"], "thinking": False},
}


def test_all_is_pinned() -> None:
    assert core.request_context.__all__ == sorted(core.request_context.__all__)
    assert set(core.request_context.__all__) == {
        "REQUEST_FIELDS", "RequestFieldError", "StoredRequest", "check_parameters", "check_tool_choice",
        "params_json", "read_params", "read_request", "read_tool_choice", "read_tools", "request_json",
        "to_options", "tool_choice_json", "tool_json", "tools_of_json",
    }  # fmt: skip


def test_a_full_line_reads_every_field() -> None:
    stored = read_request(LINE)
    assert stored == StoredRequest(
        conversation_id="C",
        turn="u1",
        provider="anthropic",
        model="claude-sonnet-4-5",
        tools=(ToolSpec("lookup", "Find", {"type": "object", "properties": {}}),),
        tool_choice=NamedToolChoice("lookup"),
        params=GenerationParams(max_tokens=1024, temperature=0.2, top_p=0.9, stop=("END",), thinking=False),
    )


def test_the_neutral_json_reads_back_into_the_same_context_and_writes_the_same_json() -> None:
    written = request_json(read_request(LINE))
    assert written["tools"][0]["parameters"] == {"type": "object", "properties": {}}
    assert request_json(read_request(written)) == written


def test_a_context_of_only_a_conversation_id_is_the_whole_conversation_with_nothing_set() -> None:
    assert read_request({"conversation_id": "C"}) == StoredRequest("C")
    assert request_json(StoredRequest("C"))["params"] == {}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"tool_choice": {"name": "missing"}}, "tool_choice.name"),
        ({"tools": [], "tool_choice": {"name": "lookup"}}, "tool_choice.name"),
        ({"conversation_id": ""}, "conversation_id"),
        ({"turn": 3}, "turn"),
        ({"colour": "red"}, "colour"),
        ({"params": {"temperature": 3}}, "params.temperature"),
        ({"params": {"temperature": "hot"}}, "params.temperature"),
        ({"params": {"top_p": 1.5}}, "params.top_p"),
        ({"params": {"max_tokens": 0}}, "params.max_tokens"),
        ({"params": {"max_tokens": 10.5}}, "params.max_tokens"),
        ({"params": {"max_tokens": True}}, "params.max_tokens"),
        ({"params": {"stop": [""]}}, "params.stop"),
        ({"params": {"thinking": "yes"}}, "params.thinking"),
        ({"params": {"effort": "huge"}}, "params.effort"),
        ({"params": {"seed": 1}}, "params.seed"),
        ({"params": [1]}, "params"),
    ],
)
def test_a_bad_field_is_refused_by_its_name(change: dict[str, Any], field: str) -> None:
    with pytest.raises(RequestFieldError) as caught:
        read_request({**LINE, **change})
    assert caught.value.field == field


def test_the_stored_context_fills_what_the_options_leave_unset() -> None:
    options = to_options(read_request(LINE), RequestOptions(), provider="anthropic")
    assert options.tools_source == "stored"
    assert [t.name for t in options.tools] == ["lookup"]
    assert options.tool_choice == NamedToolChoice("lookup")
    assert (options.model, options.max_tokens, options.temperature, options.top_p) == (
        "claude-sonnet-4-5", 1024, 0.2, 0.9)  # fmt: skip
    assert (options.stop, options.thinking) == (("END",), False)


def test_what_the_options_set_wins_over_the_stored_context() -> None:
    given = (ToolSpec("other"),)
    base = RequestOptions(
        model="m", max_tokens=5, temperature=1.0, tools=given, tools_source="given", tool_choice="none"
    )
    options = to_options(read_request(LINE), base, provider="anthropic")
    assert (options.tools, options.tools_source, options.tool_choice) == (given, "given", "none")
    assert (options.model, options.max_tokens, options.temperature, options.top_p) == ("m", 5, 1.0, 0.9)


def test_the_stored_model_is_not_sent_to_another_provider() -> None:
    assert to_options(read_request(LINE), RequestOptions(), provider="openai").model is None


def test_a_context_without_tools_leaves_the_options_tools_alone() -> None:
    options = to_options(StoredRequest("C", params=GenerationParams(max_tokens=9)), RequestOptions())
    assert (options.tools, options.tools_source, options.max_tokens) == ((), "none", 9)


def test_a_stored_effort_is_read_written_back_and_given_to_the_options() -> None:
    stored = read_request({**LINE, "params": {"effort": "high"}})
    assert stored.params.effort == "high"
    assert params_json(stored.params) == {"effort": "high"}
    assert to_options(stored, RequestOptions(), provider="anthropic").effort == "high"
    assert to_options(stored, RequestOptions(effort="low"), provider="anthropic").effort == "low"
