"""The tool rules of every provider: tool blocks need tools, a tool choice needs tools and names a declared one,
tool names follow the provider's pattern and are unique, and each schema is an object schema.

Each dialect's body holds its tools, tool choice and tool blocks in its own place; :class:`ToolsView` reads
them into one shape (with the JSON pointer of each), and :func:`check` applies the rules once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from core.preflight.findings import Finding, Rule, pointer
from core.providers.profiles import ModelProfile
from core.providers.request import CHOICE_NEEDS_TOOLS_RULE, FORCED_TOOL_DEFINED_RULE, TOOL_NAME_RULE

JSON = dict[str, Any]
Api = Literal["messages", "chat", "responses", "generate_content"]
"""The request shapes: Anthropic Messages, Chat Completions, OpenAI Responses, Gemini generateContent."""

TOOL_BLOCKS_NEED_TOOLS = Rule(
    "tool-blocks-need-tools",
    "error",
    "the history holds tool_use or tool_result blocks and the request defines no tools",
    "Anthropic 400 'Requests which include `tool_use` or `tool_result` blocks must define tools.'",
)
CHOICE_NEEDS_TOOLS = Rule(
    CHOICE_NEEDS_TOOLS_RULE,
    "error",
    "a tool choice is set and the request defines no tools",
    "OpenAI 400 \"Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.\" "
    "(writer/writer-framework#1013); a forced choice without tools fails on every provider",
)
FORCED_TOOL_DEFINED = Rule(
    FORCED_TOOL_DEFINED_RULE,
    "error",
    "the tool choice forces a tool the request does not define",
    "OpenAI, Anthropic and Gemini refuse a forced function missing from the tools (lablup/mlxcel#1581: 400 "
    "when the named function is undeclared)",
)
TOOL_NAME = Rule(
    TOOL_NAME_RULE,
    "error",
    "a tool name breaks the provider's name rule",
    "each SDK's tool-name rule (see the dialect's ToolNameRule evidence)",
)
UNIQUE_TOOL_NAMES = Rule(
    "unique-tool-names",
    "error",
    "two tools share a name",
    "Anthropic 400 'Tool names must be unique.'; OpenAI and Gemini pick a function by name",
)
OBJECT_SCHEMA = Rule(
    "tool-schema-object",
    "error",
    "a tool's parameters are not an object schema",
    'OpenAI 400 "Invalid schema for function: schema must be a JSON Schema of \'type: \\"object\\"\'"; '
    "Anthropic input_schema.type is 'object' [SDK: InputSchemaTyped]",
)
MAX_TOOLS = Rule(
    "max-tools",
    "error",
    "more tools than the provider takes",
    "OpenAI 400 \"Invalid 'tools': array too long. Expected an array with maximum length 128\"",
)
RULES = (
    TOOL_BLOCKS_NEED_TOOLS,
    CHOICE_NEEDS_TOOLS,
    FORCED_TOOL_DEFINED,
    TOOL_NAME,
    UNIQUE_TOOL_NAMES,
    OBJECT_SCHEMA,
    MAX_TOOLS,
)
# The most tools a request may define, where the provider documents a limit.
TOOL_LIMIT: dict[Api, int] = {"chat": 128, "responses": 128}
# Which tool choices need tools: OpenAI refuses any tool_choice without tools, the others a forcing one.
ANY_CHOICE_NEEDS_TOOLS: frozenset[Api] = frozenset({"chat", "responses"})


@dataclass(slots=True)
class ToolsView:
    """A body's tools, tool choice and first tool block, each with its JSON pointer."""

    tools: list[tuple[str, Any, Any]] = field(default_factory=list)
    """(pointer, name, schema) of every tool defined."""
    tools_at: str = ""
    choice_at: str | None = None
    forcing: bool = False
    forced_name: str | None = None
    first_tool_block: str | None = None


def check(api: Api, body: JSON, profile: ModelProfile) -> Iterator[Finding]:
    """Every tool rule ``body`` breaks for a model of ``profile``."""
    view = VIEWS[api](body)
    if not view.tools:
        if api == "messages" and view.first_tool_block is not None:
            yield TOOL_BLOCKS_NEED_TOOLS.at(view.first_tool_block)
        if view.choice_at is not None and (view.forcing or api in ANY_CHOICE_NEEDS_TOOLS):
            yield CHOICE_NEEDS_TOOLS.at(view.choice_at)
        return
    limit = TOOL_LIMIT.get(api)
    if limit is not None and len(view.tools) > limit:
        yield MAX_TOOLS.at(view.tools_at, f"{len(view.tools)} tools; the provider takes at most {limit}")
    names: set[object] = set()
    for at, name, schema in view.tools:
        if not isinstance(name, str) or not profile.tool_names.accepts(name):
            yield TOOL_NAME.at(at, f"tool name {name!r} breaks the rule of {profile.tool_names.evidence}")
        elif name in names:
            yield UNIQUE_TOOL_NAMES.at(at, f"tool name {name!r} is defined twice")
        names.add(name)
        if schema is not None and (not isinstance(schema, dict) or schema.get("type", "object") != "object"):
            yield OBJECT_SCHEMA.at(at, f"tool {name!r}: parameters must be a JSON Schema of type object")
    if view.forced_name is not None and view.forced_name not in names and view.choice_at is not None:
        detail = f"the tool choice forces {view.forced_name!r}, which is not defined"
        yield FORCED_TOOL_DEFINED.at(view.choice_at, detail)


def _messages(body: JSON) -> ToolsView:
    view = ToolsView(tools_at="/tools")
    for i, tool in enumerate(_list(body.get("tools"))):
        if isinstance(tool, dict) and tool.get("type", "custom") == "custom":
            view.tools.append((pointer("tools", i), tool.get("name"), tool.get("input_schema")))
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        view.choice_at = "/tool_choice"
        view.forcing = choice.get("type") in ("any", "tool")
        view.forced_name = choice.get("name") if choice.get("type") == "tool" else None
    for i, turn in enumerate(_list(body.get("messages"))):
        content = turn.get("content") if isinstance(turn, dict) else None
        for j, block in enumerate(_list(content)):
            if isinstance(block, dict) and block.get("type") in ("tool_use", "tool_result"):
                view.first_tool_block = pointer("messages", i, "content", j)
                return view
    return view


def _openai(body: JSON, nested: bool) -> ToolsView:
    view = ToolsView(tools_at="/tools")
    for i, tool in enumerate(_list(body.get("tools"))):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            continue
        spec = tool.get("function") if nested else tool
        if isinstance(spec, dict):
            view.tools.append((pointer("tools", i), spec.get("name"), spec.get("parameters")))
    if "tool_choice" in body:
        choice = body["tool_choice"]
        view.choice_at = "/tool_choice"
        view.forcing = choice == "required" or isinstance(choice, dict)
        if isinstance(choice, dict):
            named = choice.get("function") if nested else choice
            view.forced_name = named.get("name") if isinstance(named, dict) else None
    return view


def _generate_content(body: JSON) -> ToolsView:
    view = ToolsView(tools_at="/tools")
    for i, tool in enumerate(_list(body.get("tools"))):
        declarations = tool.get("functionDeclarations") if isinstance(tool, dict) else None
        for j, declaration in enumerate(_list(declarations)):
            if isinstance(declaration, dict):
                schema = declaration.get("parametersJsonSchema", declaration.get("parameters"))
                view.tools.append((pointer("tools", i, "functionDeclarations", j), declaration.get("name"), schema))
    config = (body.get("toolConfig") or {}).get("functionCallingConfig")
    if isinstance(config, dict):
        view.choice_at = "/toolConfig/functionCallingConfig"
        view.forcing = config.get("mode") in ("ANY", "VALIDATED")
        allowed = config.get("allowedFunctionNames")
        if isinstance(allowed, list) and len(allowed) == 1:
            view.forced_name = allowed[0]
    return view


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


VIEWS = {
    "messages": _messages,
    "chat": lambda body: _openai(body, nested=True),
    "responses": lambda body: _openai(body, nested=False),
    "generate_content": _generate_content,
}
