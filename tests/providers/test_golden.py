"""Golden payloads: every frozen case in every dialect equals its reviewed file in tests/golden."""

from __future__ import annotations

import json

import pytest

from core.providers import dialect_names
from tests.providers.cases import CASES, build, golden_view
from tests.providers.regen_golden import GOLDEN, golden_path

PAIRS = [(case, dialect) for dialect in dialect_names() for case in CASES]


@pytest.mark.parametrize(("case", "dialect"), PAIRS)
def test_golden_payload(case: str, dialect: str) -> None:
    path = golden_path(case, dialect)
    assert path.exists(), f"no golden file {path}; run python -m tests.providers.regen_golden and review the diff"
    expected = json.loads(path.read_text(encoding="utf-8"))
    actual = json.loads(json.dumps(golden_view(build(case, dialect))))
    assert actual == expected, f"{dialect}/{case} changed; if intended, regenerate and review the diff"


def test_no_stale_golden_files() -> None:
    """Every golden file belongs to a case of the frozen list (a removed case takes its files along)."""
    expected = {golden_path(case, dialect) for case, dialect in PAIRS}
    assert sorted(set(GOLDEN.glob("*/*.json")) - expected) == []


def test_every_dialect_has_a_golden_folder() -> None:
    assert sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()) == dialect_names()
