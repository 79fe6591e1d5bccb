"""Without a PostgreSQL server the PostgreSQL cases skip with a reason, and fail loudly under CI=true."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.mark.parametrize(("ci", "outcome"), [("true", "1 failed"), ("", "1 skipped")])
def test_missing_server(ci: str, outcome: str) -> None:
    env = {**os.environ, "CI": ci, "TRACELOUPE_TEST_PG_URL": "postgresql://nobody@127.0.0.1:1/none"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            str(HERE / "test_store_runs.py"),
            "-k",
            "postgresql and lifecycle",
        ],
        cwd=HERE.parent.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert outcome in proc.stdout, proc.stdout[-3000:]
    assert "is not reachable" in proc.stdout
