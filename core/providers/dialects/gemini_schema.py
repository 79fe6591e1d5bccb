"""The JSON Schema subset Gemini's ``parametersJsonSchema`` accepts: a tool's schema converted, each change named.

Gemini answers 400 to keywords outside its subset. The conversion follows pydantic-ai's
``GoogleJsonSchemaTransformer`` (pydantic_ai/profiles/google.py): ``$schema``, ``title``
(googleapis/python-genai#1732), ``examples``, ``discriminator`` and the exclusive bounds dropped,
``const`` as a one-value ``enum``, a string's ``format`` moved into its description.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DROPPED = ("$schema", "title", "examples", "discriminator", "exclusiveMinimum", "exclusiveMaximum")
# Keys whose value is a map of names to schemas, or a list of schemas, or one schema.
SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SCHEMA_VALUES = ("items", "additionalProperties", "not")


def gemini_schema(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``schema`` within Gemini's subset, and what was changed (empty when it already was)."""
    changes: list[str] = []
    return _convert(schema, "", changes), changes


def _convert(schema: Mapping[str, Any], at: str, changes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in DROPPED:
            changes.append(f"{at or '/'}: {key} dropped")
        elif key == "const":
            out["enum"] = [value]
            changes.append(f"{at or '/'}: const sent as a one-value enum")
        elif key == "format" and schema.get("type") == "string":
            changes.append(f"{at or '/'}: format {value!r} moved into the description")
        elif key in SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {
                name: _convert(sub, f"{at}/{key}/{name}", changes) if isinstance(sub, Mapping) else sub
                for name, sub in value.items()
            }
        elif key in SCHEMA_LISTS and isinstance(value, list):
            out[key] = [
                _convert(sub, f"{at}/{key}/{i}", changes) if isinstance(sub, Mapping) else sub
                for i, sub in enumerate(value)
            ]
        elif key in SCHEMA_VALUES and isinstance(value, Mapping):
            out[key] = _convert(value, f"{at}/{key}", changes)
        else:
            out[key] = value
    fmt = schema.get("format")
    if fmt is not None and schema.get("type") == "string":
        described = schema.get("description")
        out["description"] = f"{described} (format: {fmt})" if described else f"Format: {fmt}"
    return out
