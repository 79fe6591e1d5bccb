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
    "records",
    "payloads",
    "diff",
    "runs",
    "imports",
    "ingest",
    "attachments",
    "check",
    "suites",
    "apidocs",
    "accounts",
)
NOT_SHARED = ("app.py", "cli", "devtools", "templates", "static")
"""The app that assembles the slices, the CLI and the dev tools above them, and the packaged data folders."""
SHARED = tuple(
    sorted(
        path.name
        for path in WEB.iterdir()
        if path.name not in (*SLICES, *NOT_SHARED) and (path.suffix == ".py" or (path / "__init__.py").is_file())
    )
)
"""Every other module and package of ``web/`` (the card engine ``timeline``, ``bodies``, ``replays``, ``source.py``):
what the slices stand on; they import no slice."""
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


def _slice_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) >= 2 and parts[0] == "web" and parts[1] in SLICES else None


def test_importing_the_app_loads_no_cli_and_no_devtools_module() -> None:
    code = "import sys, web.app; print('\\n'.join(m for m in sys.modules if m.startswith(('web.cli', 'web.devtools'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_every_slice_is_a_package_with_routes() -> None:
    for name in SLICES:
        assert (WEB / name / "__init__.py").is_file(), name
        assert (WEB / name / "routes.py").is_file(), name


def test_no_slice_imports_another_slice() -> None:
    crossings = [
        f"{path.relative_to(WEB)} imports {module}"
        for name in SLICES
        for path in (WEB / name).rglob("*.py")
        for module in _imported_modules(path)
        if _slice_of(module) not in (None, name)
    ]
    assert crossings == []


def test_every_package_with_routes_is_a_listed_slice() -> None:
    unlisted = [path.parent.name for path in WEB.glob("*/routes.py") if path.parent.name not in SLICES]
    assert unlisted == []


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


def test_shared_modules_import_no_slice() -> None:
    assert {"timeline", "bodies", "replays", "source.py"} <= set(SHARED)
    offenders = [
        f"{path.relative_to(WEB)} imports {m}"
        for shared in SHARED
        for path in ([WEB / shared] if shared.endswith(".py") else sorted((WEB / shared).rglob("*.py")))
        for m in _imported_modules(path)
        if _slice_of(m) is not None
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
