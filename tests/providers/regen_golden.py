"""Rewrite the golden payloads: ``python -m tests.providers.regen_golden [--check]``.

This is the only thing that writes ``tests/golden``; the tests only read it. Review the diff
(``git diff tests/golden``) before committing: every changed line is a changed request body.
``--check`` writes nothing and exits 1 when a golden file would change.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.providers import dialect_names
from tests.providers.cases import CASES, build, golden_view

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def render(case: str, dialect: str) -> str:
    """The golden file text for one case in one dialect."""
    return json.dumps(golden_view(build(case, dialect)), indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def golden_path(case: str, dialect: str) -> Path:
    return GOLDEN / dialect / f"{case}.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report what would change; write nothing")
    ns = parser.parse_args(argv)
    changed: list[Path] = []
    expected: set[Path] = set()
    for dialect in dialect_names():
        for case in CASES:
            path = golden_path(case, dialect)
            expected.add(path)
            text = render(case, dialect)
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                changed.append(path)
                if not ns.check:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text, encoding="utf-8")
    stale = sorted(p for p in GOLDEN.glob("*/*.json") if p not in expected)
    for path in stale:
        if not ns.check:
            path.unlink()
    verb = "would change" if ns.check else "rewrote"
    for path in changed:
        print(f"{verb}: {path.relative_to(GOLDEN.parent.parent)}")
    for path in stale:
        print(f"{'would remove' if ns.check else 'removed'}: {path.relative_to(GOLDEN.parent.parent)}")
    print(f"{len(changed)} changed, {len(stale)} stale, {len(expected)} golden files", file=sys.stderr)
    return 1 if ns.check and (changed or stale) else 0


if __name__ == "__main__":
    sys.exit(main())
