"""``traceloupe`` itself: the command answers and lists its commands."""

from __future__ import annotations

import subprocess
import sys


def test_cli_help_lists_commands() -> None:
    out = subprocess.run([sys.executable, "-m", "web.cli", "--help"], capture_output=True, text=True, check=True).stdout
    assert "check" in out
    assert "repair" in out
