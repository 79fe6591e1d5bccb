"""The API page's context: the OpenAPI document read into operations and schemas, each type said in words."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from web import urls

METHODS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter of an operation: where it goes, its type and limits."""

    name: str
    where: str
    type: str
    required: bool
    description: str


@dataclass(frozen=True, slots=True)
class Answer:
    """One status an operation answers with; ``schema`` names a listed schema, when the body is one."""

    status: str
    description: str
    type: str
    schema: str | None


@dataclass(frozen=True, slots=True)
class Operation:
    """One method on one path."""

    method: str
    path: str
    summary: str
    description: str
    parameters: tuple[Parameter, ...]
    answers: tuple[Answer, ...]

    @property
    def anchor(self) -> str:
        return f"op-{self.method}-{self.path.strip('/').replace('/', '-').replace('{', '').replace('}', '')}"


@dataclass(frozen=True, slots=True)
class Property:
    name: str
    type: str
    required: bool


@dataclass(frozen=True, slots=True)
class Schema:
    """A named schema of ``components``: its properties."""

    name: str
    properties: tuple[Property, ...]


@dataclass(frozen=True, slots=True)
class ApiPage:
    """``/api-docs``: the operations by tag, then the schemas."""

    title: str
    version: str
    groups: tuple[tuple[str, tuple[Operation, ...]], ...]
    schemas: tuple[Schema, ...]
    document_url: str = f"{urls.SCHEMA}/openapi.json"
    back_url: str = urls.INDEX


def type_text(schema: Mapping[str, Any]) -> str:
    """A schema in words: ``string``, ``integer 1–500``, ``array of RunView``, ``string | null``."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return " | ".join(type_text(s) for s in schema[key])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {type_text(schema.get('items', {}))}"
    text = str(kind)
    if "enum" in schema:
        text += f": {', '.join(str(v) for v in schema['enum'])}"
    if "minimum" in schema or "maximum" in schema:
        low, high = schema.get("minimum"), schema.get("maximum")
        text += f" {_number(low) if low is not None else ''}–{_number(high) if high is not None else ''}"
    if "maxLength" in schema:
        text += f", at most {schema['maxLength']} characters"
    default = schema.get("default")
    if default not in ("", None):
        text += f" (default {str(default).lower() if isinstance(default, bool) else default})"
    return text


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _answer(status: str, answer: Mapping[str, Any]) -> Answer:
    body = answer.get("content", {}).get("application/json", {}).get("schema")
    ref = str(body["$ref"]).rsplit("/", 1)[-1] if body and "$ref" in body else None
    return Answer(status, str(answer.get("description", "")), type_text(body) if body else "", ref)


def _operation(method: str, path: str, op: Mapping[str, Any]) -> Operation:
    parameters = tuple(
        Parameter(p["name"], p["in"], type_text(p.get("schema", {})), bool(p.get("required")), p.get("description", ""))
        for p in op.get("parameters", [])
    )
    answers = tuple(_answer(status, a) for status, a in sorted(op.get("responses", {}).items()))
    return Operation(
        method.upper(), path, op.get("summary", ""), _prose(op.get("description", "")), parameters, answers
    )


def _prose(docstring: str) -> str:
    """A handler's docstring as a reader sees it: reStructuredText's ``code`` marks dropped."""
    return docstring.replace("``", "")


def _schema(name: str, body: Mapping[str, Any]) -> Schema:
    required = set(body.get("required", []))
    return Schema(name, tuple(Property(p, type_text(s), p in required) for p, s in body.get("properties", {}).items()))


def api_page(document: Mapping[str, Any]) -> ApiPage:
    """The page of an OpenAPI document (``Litestar.openapi_schema.to_schema()``)."""
    groups: dict[str, list[Operation]] = {}
    for path, item in document.get("paths", {}).items():
        for method in METHODS:
            if method in item:
                tag = (item[method].get("tags") or ["other"])[0]
                groups.setdefault(tag, []).append(_operation(method, path, item[method]))
    named = document.get("components", {}).get("schemas", {})
    schemas = tuple(_schema(name, body) for name, body in sorted(named.items()))
    info = document.get("info", {})
    ordered = tuple((tag, tuple(sorted(ops, key=lambda o: o.path))) for tag, ops in groups.items())
    return ApiPage(str(info.get("title", "")), str(info.get("version", "")), ordered, schemas)
