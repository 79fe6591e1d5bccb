"""Write pytest's assert-rewritten bytecode of every test module and conftest once, before the suite runs.

With PYTHONDONTWRITEBYTECODE set pytest keeps no cache of its rewritten modules, so each worker parsed, rewrote
and compiled every test file again, about a third of its collection. A file this misses (or a pytest whose
internals moved) only costs that time: pytest rewrites what it finds no valid cache for.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main(root: Path) -> int:
    try:
        write_all(root)
    except Exception as exc:  # pytest's internals, not an API: whatever moved, the suite runs as it would without
        print(f"rewrite_tests: skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
    return 0


def write_all(root: Path) -> None:
    from _pytest.assertion.rewrite import PYC_TAIL, _rewrite_test, _write_pyc_fp, get_cache_dir

    for path in sorted(root.rglob("*.py")):
        if not (path.name.startswith("test_") or path.name == "conftest.py"):
            continue
        source_hash, code = _rewrite_test(path, None)  # None: the ini defaults (no assertion-pass hook)
        cache_dir = get_cache_dir(path)
        cache_dir.mkdir(exist_ok=True)
        pyc = cache_dir / (path.name[:-3] + PYC_TAIL)
        partial = pyc.with_name(f"{pyc.name}.{os.getpid()}")
        with partial.open("wb") as out:
            _write_pyc_fp(out, source_hash, code)
        partial.replace(pyc)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "tests")))
