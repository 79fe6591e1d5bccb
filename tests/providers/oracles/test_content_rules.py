"""Content a provider refuses whatever the model: whitespace-only text, over-long tool call ids."""

from __future__ import annotations

from typing import Any

import pytest

from core import ToolCall, ToolReturn
from core.preflight import check_body, preflight
from core.providers import RequestOptions, provider_named
from tests.providers.builders import reply, run, tool, user


def _errors(provider: str, body: dict[str, Any], model: str) -> list[str]:
    dialect = provider_named(provider)
    found = check_body(dialect, body, dialect.profile(RequestOptions(model=model)))
    return [f.rule for f in found if f.severity == "error"]


# Oracle: Anthropic 400 "messages: text content blocks must contain non-whitespace text"
# (anthropics/claude-code#23440; nick1udwig/kibitz#78: "if there is other content, drop the offending content").
@pytest.mark.parametrize("text", [" ", "\n\n", "\t \n"])
def test_a_whitespace_only_user_text_becomes_placeholder_text(text: str) -> None:
    result = run("anthropic", [user(text, 1)])
    block = result.body["messages"][0]["content"][0]
    assert block["text"].strip()
    assert any("held only whitespace" in str(w) and w.msg_id == "u1" for w in result.warnings)
    assert not [f for f in preflight(result).findings if f.severity == "error"]


def test_a_whitespace_only_assistant_text_beside_a_tool_call_is_dropped() -> None:
    call = ToolCall(id="toolu_1", name="lookup", arguments="{}")
    history = [
        user("find it", 1),
        reply("\n\n", 1, tool_calls=[call]),
        tool(1, ToolReturn(call_id="toolu_1", result="ok")),
    ]
    result = run("anthropic", history)
    assistant = result.body["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["tool_use"]
    assert any("held only whitespace" in str(w) and "dropped" in str(w) for w in result.warnings)


def test_preflight_calls_a_whitespace_only_text_block_an_error() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "  \n"}]}],
    }
    assert "non-empty-content" in _errors("anthropic", body, "claude-sonnet-4-5")


# Oracle: OpenAI 400 "Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with maximum
# length 40, but got a string with length 83 instead." (openclaw/openclaw#875; microsoft/autogen#6377;
# Portkey-AI/gateway#1062 for the 44-character ids a gateway made).
LONG_ID = "call_" + "x" * 75


@pytest.mark.parametrize("provider", ["openai", "zhipu", "doubao"])
def test_an_over_long_tool_call_id_is_shortened_the_same_in_the_call_and_its_result(provider: str) -> None:
    call = ToolCall(id=LONG_ID, name="lookup", arguments="{}")
    history = [user("find it", 1), reply("", 1, tool_calls=[call]), tool(1, ToolReturn(call_id=LONG_ID, result="ok"))]
    result = run(provider, history)
    msgs = result.body["messages"]
    sent = msgs[1]["tool_calls"][0]["id"]
    assert len(sent) <= 40 and sent.startswith("call_xxx")
    assert msgs[2]["tool_call_id"] == sent
    assert any("longer than 40 characters" in str(w) for w in result.warnings)
    assert not [f for f in preflight(result).findings if f.severity == "error"]


def test_two_long_ids_with_the_same_start_stay_apart() -> None:
    calls = [ToolCall(id=LONG_ID + "a", name="a", arguments="{}"), ToolCall(id=LONG_ID + "b", name="b", arguments="{}")]
    results = [ToolReturn(call_id=c.id, result="ok") for c in calls]
    body = run("openai", [user("go", 1), reply("", 1, tool_calls=calls), tool(1, *results)]).body
    ids = [c["id"] for c in body["messages"][1]["tool_calls"]]
    assert len(set(ids)) == 2


def test_preflight_calls_an_over_long_tool_call_id_an_error() -> None:
    body = {
        "model": "gpt-4.1",
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "tool_calls": [{"id": LONG_ID, "type": "function", "function": {"name": "a", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": LONG_ID, "content": "ok"},
        ],
    }
    assert "tool-call-id-length" in _errors("openai", body, "gpt-4.1")


# Oracle: GLM's preserved thinking is a field of ``thinking``: zai-rs ThinkingType {mode, clear_thinking}
# (docs.rs/zai-rs, ThinkingType::enabled().with_clear_thinking(false)); docs.z.ai, Thinking Mode, "Preserved
# thinking". At the top level it is not a parameter of the API.
@pytest.mark.oracle_accepts
def test_zhipu_preserved_thinking_is_asked_for_inside_thinking() -> None:
    body = run("zhipu", [user("think", 1)], thinking=True).body
    assert body["thinking"] == {"type": "enabled", "clear_thinking": False}
    assert "clear_thinking" not in body


def test_preflight_refuses_a_zhipu_clear_thinking_at_the_top_level() -> None:
    body = {
        "model": "glm-4.6v",
        "thinking": {"type": "enabled"},
        "clear_thinking": False,
        "messages": [{"role": "user", "content": "hi"}],
    }
    dialect = provider_named("zhipu")
    found = check_body(dialect, body, dialect.profile(RequestOptions(model="glm-4.6v")))
    assert any("clear_thinking" in f.detail for f in found)
