"""The Zhipu (GLM) dialect's rules."""

from __future__ import annotations

from core import Message
from tests.providers.builders import body, call, reply, tool, user, with_image


def test_tool_and_assistant_content_are_strings() -> None:
    """BerriAI/litellm#25868: list-form tool content silently dropped by GLM's chat template.

    docs/providers.md section 9, conversion bug 9.
    """
    msgs: list[Message] = [
        user("Plot", 1),
        reply("", 1, tool_calls=[call("c1")]),
        tool(1, with_image("c1", "done")),
        reply("Here.", 2),
    ]
    for msg in body("zhipu", msgs)["messages"]:
        if msg["role"] in ("tool", "assistant"):
            assert isinstance(msg["content"], str), msg
