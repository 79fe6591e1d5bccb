"""The tools section of a built body: each tool the body defines, where its node is, and where it came from.

Every dialect writes its tools under the body's top-level ``tools`` key: one item per tool (OpenAI Chat
``{"type": "function", "function": {...}}``, Responses and Anthropic flat objects), or Gemini's one item
holding ``functionDeclarations``. The section links to those nodes as a card links to its message's:
the ``tools`` array is marked ``tools``, each tool ``tool-<name>``; a page's list carries the same names.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from core.providers.jsonable import pointer_token
from web.bodies.windows import Layout
from web.timeline.order import slug

TOOLS_ANCHOR = "tools"
"""The mark of the body's ``tools`` array, and the section's anchor."""
TOOLS_POINTER = "/tools"
GEMINI_DECLARATIONS = ("functionDeclarations", "function_declarations")
SOURCE_LABELS: Mapping[str, str] = {
    "stored": "from the stored request context",
    "given": "given for this request",
    "inferred": "inferred from the recorded calls",
}
"""What each tool's label says of where the body's tools came from (``core.providers.ToolsSource``)."""


@dataclass(frozen=True, slots=True)
class ToolView:
    """One tool of a body: its name, its node's pointer and mark, and the window its node starts in."""

    name: str
    pointer: str
    anchor: str
    window: int


@dataclass(frozen=True, slots=True)
class ToolsSection:
    """The body's tools as a page lists them, where the ``tools`` array starts, and where the tools came from."""

    tools: tuple[ToolView, ...]
    window: int
    """The window the ``tools`` array starts in."""
    source: str
    """``stored``, ``given``, ``inferred`` or ``none``."""

    @property
    def anchor(self) -> str:
        return TOOLS_ANCHOR

    @property
    def label(self) -> str | None:
        """What the section says of where its tools came from; None when they came from nowhere said."""
        return SOURCE_LABELS.get(self.source)

    def to_json(self) -> list[Any]:
        return [[[t.name, t.pointer, t.anchor, t.window] for t in self.tools], self.window, self.source]

    @classmethod
    def from_json(cls, data: list[Any]) -> ToolsSection:
        tools, window, source = data
        return cls(tuple(ToolView(*t) for t in tools), window, source)


def tool_anchor(name: str) -> str:
    """The mark of one tool's node, and its list item's: ``tool-<name>``."""
    return f"tool-{slug(name)}"


def tool_nodes(body: Any) -> Iterator[tuple[str, str]]:
    """Each tool the body defines: its node's JSON pointer and its name."""
    tools = body.get("tools") if isinstance(body, dict) else None
    for i, item in enumerate(tools if isinstance(tools, list) else ()):
        if not isinstance(item, dict):
            continue
        key = next((k for k in GEMINI_DECLARATIONS if isinstance(item.get(k), list)), None)
        if key is not None:
            for j, declaration in enumerate(item[key]):
                name = declaration.get("name") if isinstance(declaration, dict) else None
                if isinstance(name, str):
                    yield f"{TOOLS_POINTER}/{i}/{pointer_token(key)}/{j}", name
            continue
        function = item.get("function")
        name = function.get("name") if isinstance(function, dict) else item.get("name")
        if isinstance(name, str):
            yield f"{TOOLS_POINTER}/{i}", name


def tool_anchors(body: Any) -> dict[str, str]:
    """JSON pointer -> mark of the body's ``tools`` array and of each tool (empty when the body has no tools)."""
    anchors = {pointer: tool_anchor(name) for pointer, name in tool_nodes(body)}
    return {TOOLS_POINTER: TOOLS_ANCHOR, **anchors} if anchors else {}


def tools_section(body: Any, source: str, layout: Layout) -> ToolsSection | None:
    """The section of a body laid out as ``layout``; None when the body defines no tool."""
    tools = tuple(
        ToolView(name, pointer, tool_anchor(name), layout.window_of_line(layout.line_of(pointer) or 0))
        for pointer, name in tool_nodes(body)
    )
    if not tools:
        return None
    return ToolsSection(tools, layout.window_of_line(layout.line_of(TOOLS_POINTER) or 0), source)
