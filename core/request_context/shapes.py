"""Tool lists and tool choices in any provider's shape, read into the neutral one (``ToolSpec``, ``ToolChoice``).

A trace's tools come from wherever the agent logged them: its own neutral list, or the ``tools`` of the
body it sent to OpenAI Chat, OpenAI Responses, Anthropic or Gemini. Each shape is recognised by the keys
only it has (the table below), so a list may even mix them. Every refusal is a :class:`RequestFieldError`
naming the field (``tools[2].parameters``), which the caller places in its file and line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.errors import InputError
from core.jsonio import loads
from core.providers.base import NamedToolChoice, ToolChoice, ToolSpec

TOOL_CHOICE_WORDS: tuple[str, ...] = ("auto", "none", "required")
"""The neutral tool choices that name no tool."""

# Provider words for the neutral choices: Anthropic {"type": "any"} and Gemini mode ANY force some tool
# (docs.anthropic.com "tool_choice"; ai.google.dev "FunctionCallingConfig").
_CHOICE_ALIASES: dict[str, str] = {"auto": "auto", "none": "none", "required": "required", "any": "required"}

# Keys that hold a tool's JSON Schema, by shape: neutral and OpenAI/Gemini ``parameters``, Anthropic
# ``input_schema``, Gemini's full JSON Schema ``parametersJsonSchema`` (and the Python SDK's snake case).
_SCHEMA_KEYS: tuple[str, ...] = ("parameters", "input_schema", "parametersJsonSchema", "parameters_json_schema")
_GEMINI_DECLARATIONS: tuple[str, ...] = ("functionDeclarations", "function_declarations")
# Gemini's OpenAPI subset spells types in capitals ("OBJECT"); JSON Schema's are lower case.
_SCHEMA_CHILDREN: tuple[str, ...] = ("items", "additionalProperties")
_SCHEMA_LISTS: tuple[str, ...] = ("anyOf", "oneOf", "allOf", "prefixItems")

EMPTY_PARAMETERS: Mapping[str, Any] = {"type": "object", "properties": {}}


class RequestFieldError(InputError):
    """A request context field that cannot be read; ``field`` (also ``path``) is its path inside the context
    (``tools[1].name``), which the reader of a file or a line places after its own."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        super().__init__(reason, source="request context", path=field)


def read_tools(value: Any, field: str = "tools") -> tuple[ToolSpec, ...]:
    """The neutral tools of a list in any shape (or of a Gemini tool, or of a request body holding ``tools``).

    Refuses a tool with no name, a parameters schema that is not a JSON Schema object, a tool that is not a
    function (a provider's built-in search, say: it has no schema to send elsewhere) and a name given twice.
    """
    if isinstance(value, Mapping):
        if any(k in value for k in _GEMINI_DECLARATIONS):
            value = [value]
        elif "tools" in value:
            return read_tools(value["tools"], f"{field}.tools")
        else:
            raise RequestFieldError(field, "not a tool list: expected a JSON array of tools")
    if not isinstance(value, list):
        raise RequestFieldError(field, f"not a tool list: expected a JSON array, got {_json_type(value)}")
    tools: list[ToolSpec] = []
    first_at: dict[str, str] = {}
    for i, item in enumerate(value):
        for at, spec in _read_item(item, f"{field}[{i}]"):
            seen = first_at.setdefault(spec.name, at)
            if seen != at:
                raise RequestFieldError(f"{at}.name", f"tool {spec.name!r} is defined twice (first at {seen})")
            tools.append(spec)
    return tuple(tools)


MAX_TOOLS_FILE_BYTES = 16 * 1024 * 1024
"""A tools file larger than this is refused before it is parsed: tool lists are kilobytes."""


def tools_of_json(data: bytes, source: str) -> tuple[ToolSpec, ...]:
    """The tools of a JSON file's text (``--tools FILE``), in any shape ``read_tools`` reads; InputError naming the
    file and the JSON path of what is wrong."""
    if len(data) > MAX_TOOLS_FILE_BYTES:
        raise InputError(f"a tools file is at most {MAX_TOOLS_FILE_BYTES // (1024 * 1024)} MiB", source=source)
    try:
        value = loads(data)
    except ValueError as exc:
        raise InputError(f"not JSON: {exc}", source=source) from None
    try:
        return read_tools(value, "$")
    except RequestFieldError as exc:
        raise InputError(exc.reason, source=source, path=exc.field) from None


def _read_item(item: Any, at: str) -> list[tuple[str, ToolSpec]]:
    """One item of a tool list: a tool in one of the shapes, or a Gemini tool holding several declarations."""
    if not isinstance(item, Mapping):
        raise RequestFieldError(at, f"not a tool: expected a JSON object, got {_json_type(item)}")
    key = next((k for k in _GEMINI_DECLARATIONS if k in item), None)
    if key is not None:
        declarations = item[key]
        if not isinstance(declarations, list):
            raise RequestFieldError(f"{at}.{key}", "expected a JSON array of function declarations")
        return [
            (f"{at}.{key}[{j}]", _read_function(d, f"{at}.{key}[{j}]", gemini=True)) for j, d in enumerate(declarations)
        ]
    if isinstance(item.get("function"), Mapping):  # OpenAI Chat: {"type": "function", "function": {...}}
        return [(at, _read_function(item["function"], f"{at}.function", gemini=False))]
    kind = item.get("type")
    if kind not in (None, "function", "custom"):
        raise RequestFieldError(
            f"{at}.type", f"{kind!r} is not a function tool (a provider's built-in tool has no schema to carry)"
        )
    return [(at, _read_function(item, at, gemini=False))]


def _read_function(value: Any, at: str, *, gemini: bool) -> ToolSpec:
    if not isinstance(value, Mapping):
        raise RequestFieldError(at, f"not a function: expected a JSON object, got {_json_type(value)}")
    name = value.get("name")
    if not isinstance(name, str) or not name.strip():
        raise RequestFieldError(f"{at}.name", "a tool needs a name (a non-empty string)")
    description = value.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise RequestFieldError(f"{at}.description", f"expected a string, got {_json_type(description)}")
    key = next((k for k in _SCHEMA_KEYS if k in value), None)
    if key is None or value[key] is None:
        return ToolSpec(name=name, description=description, parameters=dict(EMPTY_PARAMETERS))
    schema = value[key]
    if gemini and key == "parameters" and isinstance(schema, Mapping):
        schema = _lower_types(schema)
    check_parameters(schema, f"{at}.{key}")
    return ToolSpec(name=name, description=description, parameters=schema)


def check_parameters(schema: Any, at: str) -> None:
    """Refuse a parameters schema that is not a JSON Schema object (what every provider requires of one)."""
    if not isinstance(schema, Mapping):
        raise RequestFieldError(at, f"not a JSON Schema object: expected a JSON object, got {_json_type(schema)}")
    if schema.get("type") != "object":
        got = schema.get("type")
        raise RequestFieldError(f"{at}.type", f'a tool\'s parameters must be a schema of "type": "object", got {got!r}')
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        raise RequestFieldError(f"{at}.properties", f"expected a JSON object, got {_json_type(properties)}")
    for name, sub in properties.items():
        if not isinstance(sub, Mapping | bool):
            raise RequestFieldError(f"{at}.properties.{name}", f"not a JSON Schema: got {_json_type(sub)}")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise RequestFieldError(f"{at}.required", "expected a JSON array of property names")


def _lower_types(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A Gemini OpenAPI schema with its type names in JSON Schema's lower case, at every level."""
    out = dict(schema)
    if isinstance(out.get("type"), str):
        out["type"] = out["type"].lower()
    if isinstance(out.get("properties"), Mapping):
        out["properties"] = {k: _lower_types(v) if isinstance(v, Mapping) else v for k, v in out["properties"].items()}
    for key in _SCHEMA_CHILDREN:
        if isinstance(out.get(key), Mapping):
            out[key] = _lower_types(out[key])
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_lower_types(v) if isinstance(v, Mapping) else v for v in out[key]]
    return out


def read_tool_choice(value: Any, field: str = "tool_choice") -> ToolChoice:
    """The neutral tool choice of ``"auto"|"none"|"required"``, ``{"name": N}``, or a provider's form of them
    (OpenAI ``{"type": "function", "function": {"name": N}}``, Responses ``{"type": "function", "name": N}``,
    Anthropic ``{"type": "auto"|"any"|"tool"|"none"}``, Gemini ``{"mode": ..., "allowedFunctionNames": [N]}``)."""
    if isinstance(value, str):
        word = _CHOICE_ALIASES.get(value.lower())
        if word is None:
            raise RequestFieldError(field, f"unknown tool choice {value!r}; expected auto, none, required or a tool")
        return word  # type: ignore[return-value]
    if not isinstance(value, Mapping):
        raise RequestFieldError(field, f"not a tool choice: got {_json_type(value)}")
    if isinstance(value.get("function"), Mapping):
        return _named(value["function"].get("name"), f"{field}.function.name")
    if "mode" in value:  # Gemini's functionCallingConfig
        allowed = value.get("allowedFunctionNames") or value.get("allowed_function_names")
        if isinstance(allowed, list) and len(allowed) == 1:
            return _named(allowed[0], f"{field}.allowedFunctionNames[0]")
        return read_tool_choice(value["mode"], f"{field}.mode")
    if "name" in value:
        return _named(value["name"], f"{field}.name")
    if "type" in value:  # Anthropic's {"type": "auto"} and friends
        return read_tool_choice(value["type"], f"{field}.type")
    raise RequestFieldError(field, 'not a tool choice: expected "auto", "none", "required" or {"name": TOOL}')


def _named(name: Any, at: str) -> NamedToolChoice:
    if not isinstance(name, str) or not name:
        raise RequestFieldError(at, "a forced tool needs a name (a non-empty string)")
    return NamedToolChoice(name)


def tool_choice_json(choice: ToolChoice) -> str | dict[str, str]:
    """The neutral JSON of a tool choice: the word, or ``{"name": N}``."""
    return {"name": choice.name} if isinstance(choice, NamedToolChoice) else choice


def tool_json(tool: ToolSpec) -> dict[str, Any]:
    """The neutral JSON of a tool."""
    return {"name": tool.name, "description": tool.description, "parameters": dict(tool.parameters)}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, Mapping) else type(value).__name__
