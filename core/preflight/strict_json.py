"""A body must be JSON (RFC 8259): no NaN or Infinity anywhere in it, nor in the argument texts it carries.

``core.providers.arguments`` is the builder's side: such numbers travel as strings, with a warning naming this rule.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from core.preflight.findings import Finding, Rule, pointer
from core.providers.arguments import NON_FINITE_LITERALS, STRICT_JSON_RULE

STRICT_JSON = Rule(
    STRICT_JSON_RULE,
    "error",
    "a number that JSON cannot hold (NaN, Infinity) in the body or in a tool call's argument text",
    "RFC 8259 section 6: 'Numeric values that cannot be represented ... such as Infinity and NaN are not permitted'; "
    "OpenAI 400 'We could not parse the JSON body of your request' (openai/openai-python#1387)",
)
RULES = (STRICT_JSON,)


def check(body: dict[str, Any]) -> Iterator[Finding]:
    """Every non-finite number of ``body``, and every argument text (OpenAI's ``arguments`` strings) holding one."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(body, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            yield STRICT_JSON.at(pointer(*path), f"{node} is not a JSON number")
        elif isinstance(node, dict):
            stack.extend((value, (*path, key)) for key, value in node.items())
            arguments = node.get("arguments")
            if isinstance(arguments, str) and _non_finite_text(arguments):
                yield STRICT_JSON.at(pointer(*path, "arguments"), "the argument text holds NaN or Infinity")
        elif isinstance(node, list):
            stack.extend((value, (*path, i)) for i, value in enumerate(node))


def _non_finite_text(text: str) -> bool:
    if not any(literal in text for literal in NON_FINITE_LITERALS):
        return False  # the common case: no literal, no parse
    seen: list[str] = []
    try:
        json.loads(text, parse_constant=seen.append)
    except (ValueError, RecursionError):
        return False
    return bool(seen)
