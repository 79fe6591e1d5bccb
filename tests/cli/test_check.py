"""``traceloupe check`` (and ``payload``) on a hand-written record without msg_type: what FORMAT.md shows a
newcomer is what the commands print."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.test_format_doc import block
from web.cli import main


def test_what_check_and_payload_say_about_a_missing_msg_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mine.jsonl").write_text(block("jsonl"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "mine.jsonl"]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() + captured.err.splitlines() == block("console").splitlines()
    assert main(["payload", "mine.jsonl", "--provider", "openai"]) == 1
    shown = block("text").strip().removesuffix("...")
    assert capsys.readouterr().err.startswith(shown)
