"""``suite run --junit FILE``: written whole through a temporary file, never through a symlink or into a FIFO;
when it cannot be written, one line says why, the report still prints and the exit code is not "internal error"."""

from __future__ import annotations

import argparse
import io
import os
import threading
from pathlib import Path

import pytest

from core.suites import build_report
from tests.suites.test_suite_junit import BEFORE, NOW
from web.cli.suite_run import JUNIT_NOT_WRITTEN, _print_report

REGRESSED = build_report(NOW, BEFORE)
CLEAN = build_report(BEFORE, BEFORE)


def _run(report: object, junit: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    stream = io.StringIO()
    code = _print_report(report, argparse.Namespace(junit=str(junit), json=False), stream)  # type: ignore[arg-type]
    return code, stream.getvalue(), capsys.readouterr().err


def test_the_junit_file_is_written_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "suite.xml"
    target.write_text("old")
    code, out, _ = _run(REGRESSED, target, capsys)
    assert code == 6 and out and target.read_text().startswith("<?xml")
    assert [p.name for p in tmp_path.iterdir()] == ["suite.xml"]  # no temporary file left


@pytest.mark.parametrize("where", ["folder", "missing-folder", "symlink", "fifo"])
def test_a_junit_path_that_cannot_be_written_is_one_line_and_the_report_still_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    target = {"folder": tmp_path, "missing-folder": tmp_path / "nope" / "suite.xml"}.get(where, tmp_path / "x.xml")
    if where == "symlink":
        target.symlink_to(victim)
    if where == "fifo":
        os.mkfifo(target)
    result: list[tuple[int, str, str]] = []
    worker = threading.Thread(target=lambda: result.append(_run(REGRESSED, target, capsys)), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert result, "the write blocked"
    code, out, err = result[0]
    assert code == 6  # the regression's code, not 70
    assert "regress" in out.lower()
    lines = [line for line in err.splitlines() if line.startswith("traceloupe suite run: ")]
    assert len(lines) == 1 and str(target) in lines[0] and "internal error" not in err
    assert victim.read_text() == "keep me"


def test_a_full_disk_is_its_own_exit_code_when_nothing_regressed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    code, out, err = _run(CLEAN, tmp_path / "suite.xml", capsys)
    assert code == JUNIT_NOT_WRITTEN and out
    assert "No space left on device" in err and not (tmp_path / "suite.xml").exists()
    assert list(tmp_path.iterdir()) == []
