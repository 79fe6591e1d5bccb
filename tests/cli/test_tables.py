"""The CLI tables: a cut value ends with an ellipsis, and the conversation list shows the last activity."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from web.cli import main


def test_conversations_cut_titles_with_an_ellipsis_and_show_last_activity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stamp = 1_700_000_000_000
    record = {
        "role": "user", "msg_type": "text", "content": "A very long question " * 10, "msg_id": "u1",
        "conversation_id": "c" * 50, "create_ts": stamp,
    }  # fmt: skip
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record) + "\n")
    db = str(tmp_path / "t.db")
    assert main(["import", str(path), "--db", db]) == 0
    capsys.readouterr()
    assert main(["conversations", "--db", db]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert "last activity" in header
    assert row.startswith("c" * 35 + "… ")
    assert datetime.fromtimestamp(stamp / 1000).strftime("%Y-%m-%d %H:%M") in row
    assert row.endswith("…") and "A very long question A very" in row
