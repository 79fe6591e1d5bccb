"""The Zhipu (GLM) dialect's rules."""

from __future__ import annotations

from core import (
    ImagePart,
    Message,
    ToolReturn,
)
from tests.providers.cases import PNG_B64, body, call, reply, tool, user


def test_tool_and_assistant_content_are_strings() -> None:
    """BerriAI/litellm#25868: list-form tool content silently dropped by GLM's chat template.

    providers.md section 9, conversion bug 9.
    """
    msgs: list[Message] = [
        user("Plot", 1),
        reply("", 1, tool_calls=[call("c1")]),
        tool(
            1,
            ToolReturn(
                call_id="c1",
                name="get_weather",
                result="done",
                attachments=[ImagePart(data=PNG_B64, media_type="image/png")],
            ),
        ),
        reply("Here.", 2),
    ]
    for msg in body("zhipu", msgs)["messages"]:
        if msg["role"] in ("tool", "assistant"):
            assert isinstance(msg["content"], str), msg
