"""The Anthropic dialect's rules: thinking placement and form, final-turn rules, media types, tool ids."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import (
    ImageMessage,
    Message,
    RedactedThinkingBlock,
    ThinkingBlock,
    ToolReturn,
)
from core.preflight import preflight
from core.providers.dialects import anthropic
from tests.providers.builders import blocks_of, body, call, reply, run, signed, tool, two_records, user

# The final-turn rules are a prefill's: Claude 4.6 and later take none (tests/providers/oracles/test_turn_rules.py).
PREFILL_MODEL = "claude-sonnet-4-5"


def test_thinking_blocks_stay_on_the_tool_call_turn() -> None:
    """BerriAI/litellm#15601 (#8961), pydantic/pydantic-ai#2075: "Expected thinking ... but found tool_use".

    docs/providers.md section 9, conversion bug 2.
    """
    reasoning = [
        ThinkingBlock(thinking="Plan: call the tool.", signature="sig-1"),
        RedactedThinkingBlock(data="opaque=="),
        ThinkingBlock(thinking="", signature="sig-2"),
    ]
    msgs = [user("Weather?", 1), reply("", 1, reasoning_content=reasoning, tool_calls=[call("toolu_1")])]
    assistant = body("anthropic", msgs, thinking=True)["messages"][1]
    assert assistant["content"][:3] == [
        {"type": "thinking", "thinking": "Plan: call the tool.", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque=="},
        {"type": "thinking", "thinking": "", "signature": "sig-2"},
    ]
    assert blocks_of(assistant) == ["thinking", "redacted_thinking", "thinking", "tool_use"]


def test_thinking_off_strips_thinking_from_the_final_assistant_message_only() -> None:
    """BerriAI/litellm#18926: "When thinking is disabled, an assistant message in the final position cannot
    contain thinking".

    docs/providers.md section 9, conversion bug 3.
    """
    think = [ThinkingBlock(thinking="hmm", signature="s")]
    msgs: list[Message] = [
        user("a", 1),
        reply("first", 1, reasoning_content=think),
        user("b", 2),
        reply("second", 2, reasoning_content=think),
    ]
    off = run("anthropic", msgs, thinking=False, model=PREFILL_MODEL)
    turns = off.body["messages"]
    assert blocks_of(turns[1]) == ["thinking", "text"]  # not final: kept verbatim
    assert blocks_of(turns[3]) == ["text"]
    assert any(w.msg_id == "a2" and "stripped" in w.reason for w in off.warnings)
    on = body("anthropic", msgs, thinking=True)["messages"]
    assert blocks_of(on[3]) == ["thinking", "text"]


def test_image_media_types_are_normalised_sniffed_or_degraded() -> None:
    """anthropics/claude-code#8184 and #12015, NousResearch/hermes-agent#55432: image/jpg, SVG, mismatch.

    docs/providers.md section 9, conversion bug 13.
    """
    msgs: list[Message] = [
        ImageMessage(content="data:image/jpg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD/2Q==", msg_id="u1", create_ts=1),
        ImageMessage(content="mislabeled.png", msg_id="u2", create_ts=2),
        ImageMessage(content="logo.svg", msg_id="u3", create_ts=3),
    ]
    result = run("anthropic", msgs)
    blocks = result.body["messages"][0]["content"]
    assert blocks[0]["source"]["media_type"] == "image/jpeg"
    assert blocks[1]["source"]["media_type"] == "image/jpeg"  # the bytes say JPEG, whatever the name says
    assert blocks[2] == {"type": "text", "text": "[image not included: logo.svg]"}
    assert any(w.msg_id == "u2" and "bytes are image/jpeg" in w.reason for w in result.warnings)
    assert any(w.msg_id == "u3" and "image/svg+xml" in w.reason for w in result.warnings)


def unsigned_tool_turn() -> list[Message]:
    return [
        user("Weather?", 1),
        reply("Let me check.", 1, tool_calls=[call("c1")]),
        tool(1, ToolReturn(call_id="c1", name="get_weather", result="18C")),
    ]


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-opus-4-7"])
def test_thinking_is_switched_off_when_the_last_tool_use_turn_has_no_thinking(model: str) -> None:
    """Anthropic 400 "Expected `thinking` or `redacted_thinking`, but found `tool_use`" (litellm#15601); LiteLLM
    drops thinking for such a history rather than send it into the 400."""
    result = run("anthropic", unsigned_tool_turn(), thinking=True, model=model)
    assert result.body["thinking"] == {"type": "disabled"}
    assert any(w.element == "thinking" and "tool_use" in w.reason for w in result.warnings)


def test_merged_records_put_their_thinking_first() -> None:
    """Anthropic: with thinking on, the final assistant turn must start with a thinking block, so a record's
    thinking is not left behind the text of the record merged before it."""
    msgs: list[Message] = [
        user("Weather?", 1),
        reply("Let me check.", 1),
        reply("", 2, reasoning_content=signed("call it", "sig"), tool_calls=[call("c1")]),
        tool(2, ToolReturn(call_id="c1", name="get_weather", result="18C")),
    ]
    result = run("anthropic", msgs, thinking=True)
    assert blocks_of(result.body["messages"][1]) == ["thinking", "text", "tool_use"]
    assert result.body["thinking"] == {"type": "adaptive"}


def test_a_merged_records_thinking_goes_before_the_text_of_the_record_merged_before_it() -> None:
    """Anthropic 400 "Expected `thinking` or `redacted_thinking`, but found `text`": two assistant records
    merged into one turn, each with thinking and the first ending in text, must not put thinking after text.
    Found by tests/preflight/test_built_bodies_pass.py."""
    msgs: list[Message] = [
        user("Weather?", 1),
        reply("Let me check.", 1, reasoning_content=signed("plan", "sig1")),
        reply("", 2, reasoning_content=signed("call it", "sig2"), tool_calls=[call("c1")]),
        tool(2, ToolReturn(call_id="c1", name="get_weather", result="18C")),
    ]
    result = run("anthropic", msgs, thinking=True)
    turn = result.body["messages"][1]
    assert blocks_of(turn) == ["thinking", "thinking", "text", "tool_use"]
    assert [b.get("signature") for b in turn["content"][:2]] == ["sig1", "sig2"]  # their order kept
    assert preflight(result).errors == ()


@pytest.mark.parametrize("thinking", [None, False])
def test_final_assistant_thinking_is_stripped_unless_thinking_is_on(thinking: bool | None) -> None:
    """litellm#18926: "When thinking is disabled, an assistant message in the final position cannot contain
    thinking"; without a thinking parameter, thinking is disabled."""
    msgs: list[Message] = [user("a", 1), reply("answer", 1, reasoning_content=signed("hmm", "s"))]
    result = run("anthropic", msgs, thinking=thinking)
    assert blocks_of(result.body["messages"][-1]) == ["text"]


def test_final_assistant_text_is_trimmed_of_trailing_whitespace() -> None:
    """Anthropic 400 "final assistant content cannot end with trailing whitespace"."""
    result = run("anthropic", [user("Write a haiku", 1), reply("Here it is:\n  ", 1)], model=PREFILL_MODEL)
    assert result.body["messages"][-1]["content"][-1] == {"type": "text", "text": "Here it is:"}
    assert any(w.msg_id == "a1" and "whitespace" in w.reason for w in result.warnings)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-4-5", {"type": "enabled", "budget_tokens": 2048}),
        ("claude-opus-4-7", {"type": "adaptive"}),
    ],
)
def test_anthropic_thinking_takes_the_form_the_model_accepts(model: str, expected: dict[str, Any]) -> None:
    """pydantic-ai profiles/anthropic.py: Opus 4.7+ "returns a 400 for {'type': 'enabled', 'budget_tokens'}"."""
    assert run("anthropic", [user("hi", 1)], thinking=True, model=model).body["thinking"] == expected


def test_anthropic_merges_the_records_keeping_thinking_interleaved() -> None:
    """Anthropic forbids reordering a thinking sequence: [thinking1, tool_use1, thinking2, tool_use2]."""
    turns = run("anthropic", two_records(), thinking=True).body["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert blocks_of(turns[1]) == ["thinking", "tool_use", "thinking", "tool_use"]
    assert [b.get("signature") or b["id"] for b in turns[1]["content"]] == ["sig1", "call_x", "sig2", "call_y"]
    assert [(b["tool_use_id"], b["content"]) for b in turns[2]["content"]] == [("call_x", "18C"), ("call_y", "25C")]


@given(st.text(max_size=12) | st.sampled_from(["call_1", "toolu_01-x", "a b", "\u00e9", "x\n", "\ud800"]) | st.none())
def test_tool_id_keeps_what_the_regex_accepts_and_rewrites_the_rest(call_id: str | None) -> None:
    text = call_id or "call"
    out = anthropic.tool_id(call_id)
    assert re.fullmatch(r"[A-Za-z0-9_-]+", out)
    if re.fullmatch(r"[A-Za-z0-9_-]+", text):
        assert out == text
    else:
        assert re.fullmatch(re.escape(re.sub(r"[^A-Za-z0-9_-]", "_", text)) + "_[0-9a-f]{8}", out)


@given(st.lists(st.text(alphabet="ab_. -\u00e9", max_size=4), min_size=2, max_size=6, unique=True))
def test_tool_id_keeps_distinct_ids_distinct(call_ids: list[str]) -> None:
    """Ids that differ only in rejected characters (a.b, a b, a_b) stay distinct: Anthropic rejects two
    tool_use blocks with one id, and each result must pair with its own call."""
    assert len({anthropic.tool_id(i) for i in call_ids}) == len(call_ids)
