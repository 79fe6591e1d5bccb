"""The public API of core.providers is pinned: growing it is a visible decision."""

from __future__ import annotations

import core.providers
from core.providers import dialect_names, get_dialect


def test_all_is_pinned() -> None:
    assert core.providers.__all__ == [
        "DIALECT_MODULES",
        "PHASES",
        "ChatLLM",
        "Degradation",
        "Dialect",
        "RequestContext",
        "RequestOptions",
        "RequestResult",
        "ToolSpec",
        "dialect_names",
        "expand_trace_for_msg",
        "get_dialect",
    ]


def test_every_registered_dialect_loads_under_its_name() -> None:
    assert dialect_names() == ["anthropic", "doubao", "gemini", "openai", "openai-responses", "zhipu"]
    for name in dialect_names():
        dialect = get_dialect(name)
        assert dialect.name == name and dialect.default_model and dialect.description


def test_provider_modules_never_import_each_other_or_an_sdk() -> None:
    """Provider modules depend on core.llm and the shared base, never on each other (DESIGN.md), and do no I/O
    through a client: no SDK is imported by the library."""
    import ast
    from pathlib import Path

    folder = Path(core.providers.__file__).parent
    dialect_modules = {f"core.providers.{n.replace('-', '_')}" for n in dialect_names()}
    for path in folder.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        own = f"core.providers.{path.stem}"
        assert not (imported & dialect_modules) - {own}, path.name
        assert not imported & {"openai", "anthropic", "google.genai", "httpx", "requests", "web"}, path.name
