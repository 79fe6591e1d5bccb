"""Rules across packages: the library never depends on the dashboard, and only the store speaks SQL.

``tests/web/test_layout.py`` holds the rules inside ``web/``; these are the ones between ``core/`` and ``web/``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import core

CORE = Path(core.__file__).parent
STORE = CORE / "store"
WEB_MODULE = re.compile(r"web(\.\w+)*")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _strings(path: Path) -> list[str]:
    return [
        node.value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_core_never_imports_web() -> None:
    offenders = [
        f"{path.relative_to(CORE)} imports {m}"
        for path in CORE.rglob("*.py")
        for m in _imports(path)
        if m == "web" or m.startswith("web.")
    ]
    assert offenders == []


def test_core_never_names_a_web_module_by_string() -> None:
    offenders = [
        f"{path.relative_to(CORE)}: {value!r}"
        for path in CORE.rglob("*.py")
        for value in _strings(path)
        if WEB_MODULE.fullmatch(value)
    ]
    assert offenders == []


def test_only_the_store_imports_sqlalchemy_in_core() -> None:
    offenders = [
        f"{path.relative_to(CORE)} imports {m}"
        for path in CORE.rglob("*.py")
        if STORE not in path.parents
        for m in _imports(path)
        if m.split(".")[0] in ("sqlalchemy", "sqlmodel") or m == "core.store.tables"
    ]
    assert offenders == []


def test_templates_and_static_sit_at_the_top_level_as_the_project_card_draws_them() -> None:
    from web.settings import STATIC_DIR, TEMPLATES_DIR

    root = CORE.parent
    assert (root / "templates", root / "static") == (TEMPLATES_DIR, STATIC_DIR)
    assert not (root / "web" / "templates").exists() and not (root / "web" / "static").exists()
