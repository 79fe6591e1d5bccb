"""Builders of typed histories for the provider tests: messages with fixed ids and timestamps, the test assets,
and the request a history gives under the cases' options."""

from __future__ import annotations

import base64
from dataclasses import replace
from pathlib import Path
from typing import Any

from core import (
    AssistantTextMessage,
    BaseMessage,
    ImagePart,
    Message,
    RedactedThinkingBlock,
    TextMessage,
    ThinkingBlock,
    ToolCall,
    ToolReturn,
)
from core.providers import ChatLLM, RequestOptions, RequestResult, ToolSpec, provider_named

ASSETS = Path(__file__).parent / "assets"
PNG_B64 = base64.b64encode((ASSETS / "cat.png").read_bytes()).decode()
JPEG_B64 = base64.b64encode((ASSETS / "photo.jpg").read_bytes()).decode()
BASE_OPTIONS = RequestOptions(attachments_root=ASSETS)
WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def user(text: str, n: int, **kw: Any) -> TextMessage:
    """User message ``u<n>`` stamped at ``1000 n``."""
    return TextMessage(**{"content": text, "msg_id": f"u{n}", "create_ts": 1000 * n, "conversation_id": "c1", **kw})


def reply(text: str, n: int, **kw: Any) -> AssistantTextMessage:
    """Assistant message ``a<n>`` stamped at ``1000 n + 500``."""
    fields = {"content": text, "msg_id": f"a{n}", "create_ts": 1000 * n + 500, "conversation_id": "c1", **kw}
    return AssistantTextMessage(**fields)


def tool(n: int, *results: ToolReturn | str) -> BaseMessage:
    return BaseMessage(role="tool", tool_reses=list(results), msg_id=f"t{n}", create_ts=1000 * n + 600)


def call(call_id: str, city: str = "Paris", name: str = "get_weather") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=f'{{"city":"{city}"}}')


def with_image(call_id: str, result: str, name: str = "get_weather") -> ToolReturn:
    """The result of call ``call_id``: ``result`` and the green pixel attached."""
    image = ImagePart(data=PNG_B64, media_type="image/png")
    return ToolReturn(call_id=call_id, name=name, result=result, attachments=[image])


def run(dialect: str, msgs: list[Message], **options: Any) -> RequestResult:
    """The request for a history built in a test, with the cases' options changed by ``options``."""
    return ChatLLM(provider_named(dialect), replace(BASE_OPTIONS, **options)).construct_request_params(msgs)


def body(dialect: str, msgs: list[Message], **options: Any) -> dict[str, Any]:
    """The body of :func:`run`."""
    return run(dialect, msgs, **options).body


def blocks_of(turn: dict[str, Any]) -> list[str]:
    """The block types of an Anthropic turn."""
    return [b["type"] for b in turn["content"]]


def signed(text: str, signature: str) -> list[ThinkingBlock | RedactedThinkingBlock]:
    """One signed thinking block, as a reasoning_content."""
    return [ThinkingBlock(thinking=text, signature=signature)]


def two_records() -> list[Message]:
    """Two assistant records, one call each, written before both results (a streamed or parallel agent)."""
    return [
        user("Weather in Paris and Rome?", 1),
        reply("", 1, reasoning_content=signed("Paris first", "sig1"), tool_calls=[call("call_x", "Paris")]),
        reply("", 2, reasoning_content=signed("then Rome", "sig2"), tool_calls=[call("call_y", "Rome")]),
        tool(2, ToolReturn(call_id="call_x", name="get_weather", result="18C")),
        tool(3, ToolReturn(call_id="call_y", name="get_weather", result="25C")),
    ]
