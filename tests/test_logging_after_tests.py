"""The test session's loggers: an app built by one test leaves no handler on that test's captured stderr behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import atexit
import logging

from litestar import Litestar


def test_builds_an_app_and_logs_at_exit() -> None:
    Litestar(route_handlers=[])
    atexit.register(lambda: logging.getLogger("probe").warning("logged at exit"))
"""


def test_a_record_logged_at_exit_after_a_test_built_an_app_is_written_not_a_logging_error(tmp_path: Path) -> None:
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "tests.conftest",
         "--rootdir", str(tmp_path), str(tmp_path / "test_probe.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "logged at exit" in done.stderr
    assert "Logging error" not in done.stderr and "I/O operation on closed file" not in done.stderr, done.stderr
