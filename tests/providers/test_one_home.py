"""Each provider lives in its dialect module: nothing else in the package names one."""

from __future__ import annotations

import ast
from pathlib import Path

from core.providers import dialect_names

ROOT = Path(__file__).resolve().parents[2]
DIALECTS = ROOT / "core" / "providers" / "dialects"
DEMO = ROOT / "web" / "devtools"  # the demo data and the stub provider play given providers


def _named_literals(path: Path, names: frozenset[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
    ]


def test_no_provider_name_is_written_outside_its_dialect_module() -> None:
    """A provider's facts are read from its dialect object, never looked up or branched on by its name."""
    names = frozenset(dialect_names())
    found: list[str] = []
    for path in sorted([*(ROOT / "core").rglob("*.py"), *(ROOT / "web").rglob("*.py")]):
        if path.is_relative_to(DIALECTS) or path.is_relative_to(DEMO):
            continue
        found += _named_literals(path, names)
    assert found == []
