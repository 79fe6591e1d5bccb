"""Payload cases of the request-time rules by model: one history per rule, built for two model families where the
rule depends on the model (the first family listed is each dialect's default or older one).

Registered into ``CASES`` when ``tests.providers.cases`` loads; golden payloads as for the element cases.
"""

from __future__ import annotations

from dataclasses import replace

from core import (
    ImagePart,
    Message,
    ThinkingBlock,
    ToolCall,
    ToolReturn,
)
from core.providers import ToolSpec
from tests.providers.builders import BASE_OPTIONS, PNG_B64, call, reply, tool, user
from tests.providers.case_registry import Case, case, model_case


def _media_result() -> list[Message]:
    """A tool result with an image: Gemini 3 takes it in functionResponse.parts, 2.5 after the responses."""
    chart = ToolReturn(
        call_id="call_1",
        name="plot",
        result="Chart rendered.",
        attachments=[ImagePart(data=PNG_B64, media_type="image/png", detail="a bar chart")],
    )
    return [
        user("Plot the sales.", 1),
        reply("", 1, tool_calls=[ToolCall(id="call_1", name="plot", arguments='{"series":"sales"}')]),
        tool(1, chart),
    ]


model_case("bug1_media_result_older_models", _media_result, gemini="gemini-2.5-flash")
model_case("bug1_media_result_newer_models", _media_result, gemini="gemini-3-pro-preview")


@case
def bug2_result_and_tool_names() -> Case:
    """The result names another tool than its call (the call's name is sent) and the tool's name breaks the
    naming rule of every provider but Gemini's ("sales.lookup" with a dot) or all ("sales lookup")."""
    msgs: list[Message] = [
        user("Sales?", 1),
        reply("", 1, tool_calls=[call("call_1", name="sales.lookup"), call("call_2", name="sales lookup")]),
        tool(1, ToolReturn(call_id="call_1", name="lookup_v2", result="12"), ToolReturn(call_id="call_2", result="7")),
    ]
    tools = (ToolSpec(name="sales.lookup"), ToolSpec(name="sales lookup"))
    return msgs, replace(BASE_OPTIONS, tools=tools)


def _unsigned_tool_turn() -> Case:
    """Thinking on, but the last tool-use turn has no signed thinking (another provider's history)."""
    msgs: list[Message] = [
        user("Weather in Paris?", 1),
        reply("Let me check.", 1, tool_calls=[call("call_1")]),
        tool(1, ToolReturn(call_id="call_1", name="get_weather", result="18C")),
    ]
    return msgs, replace(BASE_OPTIONS, thinking=True)


model_case("bug3_unsigned_tool_turn_older_models", _unsigned_tool_turn, anthropic="claude-sonnet-4-5")
model_case("bug3_unsigned_tool_turn_newer_models", _unsigned_tool_turn, anthropic="claude-opus-4-7")


@case
def bug3_merged_records_thinking_leads() -> Case:
    """Two records merge into one turn; the second's signed thinking goes before the first's text."""
    msgs: list[Message] = [
        user("Weather in Paris?", 1),
        reply("Let me check.", 1),
        reply("", 2, reasoning_content=[ThinkingBlock(thinking="Call it.", signature="sig1")], tool_calls=[call("c1")]),
        tool(2, ToolReturn(call_id="c1", name="get_weather", result="18C")),
    ]
    return msgs, replace(BASE_OPTIONS, thinking=True)


def _final_thinking() -> list[Message]:
    """No thinking parameter: the final assistant turn (a prefill) loses its thinking blocks."""
    return [
        user("Finish my sentence: the sky is", 1),
        reply("blue", 1, reasoning_content=[ThinkingBlock(thinking="Easy.", signature="sig1")]),
    ]


def _final_trailing_whitespace() -> list[Message]:
    """A prefill ending in whitespace is trimmed for Anthropic."""
    return [user("Write a haiku.", 1), reply("Here it is:\n  ", 1)]


# The prefill rules hold for a model that takes a prefill; Claude 4.6 and later take none (a user turn is added).
model_case("bug4_final_thinking_without_thinking_parameter", _final_thinking, anthropic="claude-sonnet-4-5")
model_case("bug5_final_text_trailing_whitespace", _final_trailing_whitespace, anthropic="claude-sonnet-4-5")
model_case("final_assistant_turn_no_prefill_models", _final_trailing_whitespace, anthropic="claude-opus-4-7")


def _thinking_on() -> Case:
    return [user("Think hard: 17 * 23?", 1)], replace(BASE_OPTIONS, thinking=True, max_tokens=4096)


def _thinking_off() -> Case:
    return [user("Quick: 2 + 2?", 1)], replace(BASE_OPTIONS, thinking=False, max_tokens=4096)


OLDER = {
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
    "openai": "gpt-4.1",
    "openai_responses": "gpt-5",
}
NEWER = {
    "anthropic": "claude-opus-4-7",
    "gemini": "gemini-3-pro-preview",
    "openai": "o3-mini",
    "openai_responses": "gpt-5.1",
}
model_case("bug6_thinking_on_older_models", _thinking_on, **OLDER)
model_case("bug6_thinking_on_newer_models", _thinking_on, **NEWER)
model_case("bug6_thinking_off_older_models", _thinking_off, **OLDER)
model_case("bug6_thinking_off_newer_models", _thinking_off, **NEWER)


@case
def bug7_two_records_before_results() -> Case:
    """A streamed agent writes one assistant record per call, then both results: each real result reaches
    its call; Anthropic keeps [thinking1, tool_use1, thinking2, tool_use2] in one turn."""
    msgs: list[Message] = [
        user("Weather in Paris and Rome?", 1),
        reply(
            "",
            1,
            reasoning_content=[ThinkingBlock(thinking="Paris first.", signature="sig1")],
            tool_calls=[call("call_x", "Paris")],
        ),
        reply(
            "And Rome.",
            2,
            reasoning_content=[ThinkingBlock(thinking="Then Rome.", signature="sig2")],
            tool_calls=[call("call_y", "Rome")],
        ),
        tool(2, ToolReturn(call_id="call_x", name="get_weather", result="18C")),
        tool(3, ToolReturn(call_id="call_y", name="get_weather", result="25C")),
    ]
    return msgs, replace(BASE_OPTIONS, thinking=True)
