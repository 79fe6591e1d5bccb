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
ROOT = CORE.parent
WEB_MODULE = re.compile(r"web(\.\w+)*")
BACKEND = STORE / "backend"
"""The one package that knows which database the store runs on (with the migrations, written per database)."""
DATABASE_NAMES = {"sqlite", "postgresql"}
COLUMN_TYPES = STORE / "column_types.py"
"""Declares a column type per database (JSONB on PostgreSQL): a schema, as the migrations are."""


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


def _asks_which_database(path: Path) -> list[str]:
    """Where a module asks which database it runs on: a dialect's or URL's backend name, a comparison with one,
    or an import of a database's own SQL constructs."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and node.attr == "name":
            if isinstance(node.value, ast.Attribute) and node.value.attr == "dialect":
                found.append(f"line {line}: .dialect.name")
        elif isinstance(node, ast.Attribute) and node.attr == "get_backend_name":
            found.append(f"line {line}: get_backend_name()")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(side, ast.Constant) and side.value in DATABASE_NAMES for side in sides):
                found.append(f"line {line}: compared with a database's name")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy.dialects"):
            found.append(f"line {line}: imports {node.module}")
    return found


def _outside_the_backend() -> list[Path]:
    return [
        path
        for top in (CORE, ROOT / "web")
        for path in sorted(top.rglob("*.py"))
        if BACKEND not in path.parents and STORE / "migrations" not in path.parents and path != COLUMN_TYPES
    ]


JOB_QUEUE = CORE / "jobs" / "__init__.py"


def test_no_module_outside_the_store_backend_asks_which_database_it_runs_on() -> None:
    offenders = [
        f"{path.relative_to(ROOT)} {where}"
        for path in _outside_the_backend()
        if path != JOB_QUEUE
        for where in _asks_which_database(path)
    ]
    assert offenders == []


def test_the_job_queue_is_chosen_by_what_the_backend_serves() -> None:
    assert _asks_which_database(JOB_QUEUE) == []


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
