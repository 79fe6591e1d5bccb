"""The tools section of a body: every dialect's tool nodes found, marked for linking, and placed in their windows."""

from __future__ import annotations

import pytest

from core.messages.union import MESSAGE_ADAPTER
from core.providers import ChatLLM, RequestOptions, ToolSpec, provider_named
from web.bodies.jsonview import Mark, render
from web.bodies.tools import ToolsSection, tool_anchors, tools_section
from web.bodies.windows import plan

TOOLS = (
    ToolSpec("lookup_order", "Find an order.", {"type": "object", "properties": {"order_id": {"type": "string"}}}),
    ToolSpec("refund", "Refund an order.", {"type": "object", "properties": {"amount_eur": {"type": "number"}}}),
)
POINTERS = {
    "openai": ["/tools/0", "/tools/1"],
    "openai-responses": ["/tools/0", "/tools/1"],
    "anthropic": ["/tools/0", "/tools/1"],
    "gemini": ["/tools/0/functionDeclarations/0", "/tools/0/functionDeclarations/1"],
}


def _body(dialect: str) -> dict[str, object]:
    message = MESSAGE_ADAPTER.validate_python(
        {"role": "user", "msg_type": "text", "content": "Refund A-1", "msg_id": "u1", "conversation_id": "c",
         "create_ts": 0}
    )  # fmt: skip
    options = RequestOptions(model="m", tools=TOOLS, tools_source="stored")
    return ChatLLM(provider_named(dialect), options).construct_request_params([message]).body


@pytest.mark.parametrize("dialect", list(POINTERS))
def test_each_tool_node_is_marked_with_its_name_and_the_array_with_the_sections_anchor(dialect: str) -> None:
    body = _body(dialect)
    anchors = tool_anchors(body)
    assert anchors == {
        "/tools": "tools",
        POINTERS[dialect][0]: "tool-lookup_order",
        POINTERS[dialect][1]: "tool-refund",
    }
    marks = {p: Mark(card=a) for p, a in anchors.items()}
    opened = [t.mark.card for t in render(body, marks).tokens if t.kind == "open" and t.mark is not None]
    assert opened == ["tools", "tool-lookup_order", "tool-refund"]


def test_the_section_names_each_tools_window_and_reads_back_from_a_digest() -> None:
    body = _body("anthropic")
    layout = plan(body, budget=64)  # small windows: the tools sit past the first
    section = tools_section(body, "inferred", layout)
    assert section is not None and [t.name for t in section.tools] == ["lookup_order", "refund"]
    assert section.window > 0 and all(t.window >= section.window for t in section.tools)
    assert section.label == "inferred from the recorded calls"
    assert ToolsSection.from_json(section.to_json()) == section


def test_a_body_without_tools_has_no_section() -> None:
    body = _body("openai")
    body.pop("tools")
    assert tool_anchors(body) == {} and tools_section(body, "none", plan(body)) is None
