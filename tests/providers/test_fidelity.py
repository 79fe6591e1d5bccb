"""Request-time rules the SDK types cannot express, several of them by model: each test names its authority."""

from __future__ import annotations

import pytest

from core import Message, ToolReturn
from core.providers import ToolSpec, dialect_names
from tests.providers.builders import call, reply, run, tool, two_records, user

# -- bug 2: functionResponse.name is the call's, tool names follow the provider's rule ---------------------------


@pytest.mark.parametrize("dialect", dialect_names())
def test_a_tool_name_the_provider_rejects_is_rewritten_alike_in_definition_call_and_result(dialect: str) -> None:
    """openai SDK FunctionDefinition.name (a-zA-Z0-9_-, 64); Anthropic 400 '^[a-zA-Z0-9_-]{1,128}$'
    (claude-code#96152); google-genai FunctionDeclaration.name (letter or _ first, then a-zA-Z0-9_.:-, 128)."""
    msgs: list[Message] = [
        user("Weather?", 1),
        reply("", 1, tool_calls=[call("c1", name="weather lookup")]),
        tool(1, ToolReturn(call_id="c1", result="18C")),
    ]
    spec = ToolSpec(name="weather lookup")
    result = run(dialect, msgs, tools=(spec,))
    text = str(result.body)
    assert "weather lookup" not in text
    sent = result.profile.tool_names.rewrite("weather lookup")
    assert result.profile.tool_names.accepts(sent) and text.count(sent) >= 2
    assert any(w.element == "tool_name" and "weather lookup" in w.reason for w in result.warnings)


# -- bug 7: two assistant records before their results ---------------------------------------------------------


@pytest.mark.parametrize("dialect", dialect_names())
def test_records_written_one_per_call_deliver_every_real_result(dialect: str) -> None:
    """A streamed or parallel agent writes one assistant record per call before the results; no result is
    replaced by a made-up failure (the tool succeeded) and none is dropped."""
    result = run(dialect, two_records(), thinking=True)
    text = str(result.body)
    assert "18C" in text and "25C" in text and "not answered" not in text
    assert not any(
        "never answered" in w.reason or ("dropped" in w.reason and "result" in w.element) for w in result.warnings
    )


@pytest.mark.parametrize("dialect", ["openai", "zhipu", "doubao"])
def test_chat_completions_sends_the_records_as_one_assistant_message(dialect: str) -> None:
    """OpenAI: "An assistant message with 'tool_calls' must be followed by tool messages responding to each
    'tool_call_id'" (docs/providers.md section 1): the two records become one message with both calls."""
    msgs = run(dialect, two_records()).body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "tool"]
    assert [c["id"] for c in msgs[1]["tool_calls"]] == ["call_x", "call_y"]
    assert [(m["tool_call_id"], m["content"]) for m in msgs[2:]] == [("call_x", "18C"), ("call_y", "25C")]
