"""Dialect names and where each lives. A new provider is one module with a ``DIALECT`` and one line here.

Modules are imported on first use, so naming a dialect costs nothing until it is asked for.
"""

from __future__ import annotations

import importlib

from core.errors import UnknownNameError
from core.providers.base import Dialect

DIALECT_MODULES: dict[str, str] = {
    "anthropic": "core.providers.anthropic",
    "doubao": "core.providers.doubao",
    "gemini": "core.providers.gemini",
    "openai": "core.providers.openai",
    "openai-responses": "core.providers.openai_responses",
    "zhipu": "core.providers.zhipu",
}
"""Every dialect by name; the name is also the folder of its golden payloads."""

_loaded: dict[str, Dialect] = {}


def dialect_names() -> list[str]:
    """The registered dialect names, sorted."""
    return sorted(DIALECT_MODULES)


def get_dialect(name: str) -> Dialect:
    """The dialect registered under ``name``; UnknownNameError (listing the known ones) otherwise."""
    dialect = _loaded.get(name)
    if dialect is not None:
        return dialect
    module_name = DIALECT_MODULES.get(name)
    if module_name is None:
        raise UnknownNameError(f"unknown provider {name!r}; known: {', '.join(dialect_names())}")
    found = importlib.import_module(module_name).DIALECT
    if not isinstance(found, Dialect) or found.name != name:
        raise TypeError(f"{module_name}.DIALECT must be a Dialect named {name!r}")
    _loaded[name] = found
    return found
