"""``traceloupe stub-provider``: the loopback stand-in for the providers, and its step scripts from a file."""

from __future__ import annotations

from typing import Any

import pytest

from web.cli import main


def test_the_stub_command_loads_step_scripts_from_a_file(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('["not", "a", "mapping"]')
    assert main(["stub-provider", "--port", "0", "--script", str(bad)]) == 1
    assert "cannot read the step script" in capsys.readouterr().err
