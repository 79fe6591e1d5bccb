"""The OpenAI Responses dialect's rules."""

from __future__ import annotations

from core import (
    Message,
    ThinkingBlock,
    ToolReturn,
)
from tests.providers.builders import call, reply, run, tool, user


def test_no_reasoning_item_is_sent_without_the_item_it_belongs_to() -> None:
    """pydantic/pydantic-ai#2861, #3230 (PR #2869, #2881): reasoning item without its following item.

    docs/providers.md section 9, conversion bug 11.
    """
    msgs: list[Message] = [
        user("Weather?", 1),
        reply("Checking.", 1, reasoning_content="think", tool_calls=[call("c1")]),
        tool(1, ToolReturn(call_id="c1", name="get_weather", result="18C")),
        reply("", 2, reasoning_content=[ThinkingBlock(thinking="t", signature="s")], tool_calls=[call("c2")]),
        tool(2, ToolReturn(call_id="c2", name="get_weather", result="19C")),
    ]
    result = run("openai-responses", msgs)
    items = result.body["input"]
    assert all(item.get("type") != "reasoning" for item in items)
    calls = [i for i, item in enumerate(items) if item.get("type") == "function_call"]
    assert all("id" not in items[i] for i in calls)  # an fc_ item id would demand its reasoning item
    assert items[calls[0] - 1] == {"role": "assistant", "content": "Checking."}
    assert [w.msg_id for w in result.warnings if w.element == "reasoning"] == ["a1", "a2"]
