"""The shape of ``web/``: slices side by side on shared packages, an app that never loads the CLI, no SQL.

The README's "Layout" table describes these rules; these tests keep it true.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import web

WEB = Path(web.__file__).parent
SLICES = (
    "conversations",
    "timeline",
    "payloads",
    "diff",
    "runs",
    "imports",
    "attachments",
    "check",
    "suites",
    "apidocs",
)
HANDLER_MODULES = ("controllers", "api", "routes")
"""A slice's route handlers: another slice may use its services and page contexts, never these."""
SHARED = (
    "deps.py",
    "errors.py",
    "source.py",
    "urls.py",
    "heavy.py",
    "backlog.py",
    "masking.py",
    "tasks.py",
    "bodies",
    "replays",
)
"""Modules and packages every slice may stand on; they import no slice but the card engine's."""
CARD_ENGINE = "timeline"
"""The slice whose card engine (order, outlines, cards) every page and the shared conversation reader draw with."""
STORE_INSIDES = (
    "sqlalchemy",
    "core.store.tables",
    "core.store.query",
    "core.store.pg_search",
    "core.store.engine.read_transaction",
    "core.store.engine.write_transaction",
)
"""SQL, the store's tables and its transactions: only ``core.store`` speaks them; ``web/`` asks the Store."""


def _imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_importing_the_app_loads_no_cli_and_no_devtools_module() -> None:
    code = "import sys, web.app; print('\\n'.join(m for m in sys.modules if m.startswith(('web.cli', 'web.devtools'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_every_slice_is_a_package_with_routes() -> None:
    for name in SLICES:
        assert (WEB / name / "__init__.py").is_file(), name
        assert (WEB / name / "routes.py").is_file(), name


def test_no_slice_imports_another_slices_handlers() -> None:
    crossings = []
    for name in SLICES:
        for path in (WEB / name).rglob("*.py"):
            for module in _imported_modules(path):
                parts = module.split(".")
                other_slice = len(parts) >= 3 and parts[0] == "web" and parts[1] in SLICES and parts[1] != name
                if other_slice and parts[2] in HANDLER_MODULES:
                    crossings.append(f"{path.relative_to(WEB)} imports {module}")
    assert crossings == []


def test_only_the_app_assembles_the_slices_routes() -> None:
    importers = [
        str(path.relative_to(WEB))
        for path in WEB.rglob("*.py")
        if any(m.startswith("web.") and m.endswith(".routes") for m in _imported_modules(path))
    ]
    assert importers == ["app.py"]


def test_nothing_outside_the_cli_imports_the_cli_or_the_devtools() -> None:
    offenders = []
    for path in WEB.rglob("*.py"):
        top = path.relative_to(WEB).parts[0]
        if top in ("cli", "devtools"):
            continue
        offenders += [
            f"{path.relative_to(WEB)} imports {m}"
            for m in _imported_modules(path)
            if m.startswith(("web.cli", "web.devtools"))
        ]
    assert offenders == []


def _slice_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) >= 2 and parts[0] == "web" and parts[1] in SLICES else None


def _slice_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in SLICES}
    for name in SLICES:
        for path in (WEB / name).rglob("*.py"):
            for module in _imported_modules(path):
                other = _slice_of(module)
                if other is not None and other != name:
                    graph[name].add(other)
    return graph


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        here = todo.pop()
        if here not in seen:
            seen.add(here)
            todo.extend(graph[here])
    return seen


def test_no_import_cycle_between_slices() -> None:
    graph = _slice_graph()
    cycles = sorted(f"{a} <-> {b}" for a in SLICES for b in graph[a] if a < b and a in _reaches(graph, b))
    assert cycles == []


def test_shared_modules_import_no_slice() -> None:
    offenders = []
    for shared in SHARED:
        paths = [WEB / shared] if shared.endswith(".py") else sorted((WEB / shared).rglob("*.py"))
        paths = [path for path in paths if path.is_file()]
        for path in paths:
            offenders += [
                f"{path.relative_to(WEB)} imports {m}"
                for m in _imported_modules(path)
                if _slice_of(m) not in (None, CARD_ENGINE)
            ]
    assert offenders == []


def test_web_imports_no_sqlalchemy_and_no_store_tables() -> None:
    offenders = [
        f"{path.relative_to(WEB)} imports {m}"
        for path in WEB.rglob("*.py")
        for m in _imported_modules(path)
        if any(m == inside or m.startswith(f"{inside}.") for inside in STORE_INSIDES)
    ]
    assert offenders == []
