"""``traceloupe import --from``: ``auto`` tells a format from the content and says which, a foreign file goes
through the same all-or-nothing import (a changed message under the same id refuses it, naming file, line and id)."""

from __future__ import annotations

from pathlib import Path

import pytest

from web.cli import main

DATA = Path(__file__).parents[1] / "formats" / "data"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_auto_reads_the_content_not_the_name_and_says_what_it_chose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    disguised = tmp_path / "messages.jsonl"
    disguised.write_bytes((DATA / "otlp" / "latitude_manual_tools.json").read_bytes())
    code, out, err = _run(capsys, "import", "--from", "auto", str(disguised), "--db", f"sqlite:///{tmp_path / 'a.db'}")
    assert code == 0
    assert f"{disguised}: read as otlp" in err
    assert "imported 2 messages into 1 conversation" in out


def test_auto_refuses_a_file_it_cannot_tell_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    odd = tmp_path / "odd.json"
    odd.write_text('{"hello": "world"}\n')
    code, _, err = _run(capsys, "import", "--from", "auto", str(odd), "--db", f"sqlite:///{tmp_path / 'a.db'}")
    assert code == 1
    assert str(odd) in err and "cannot tell which format" in err


def test_a_changed_message_under_an_imported_id_refuses_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'a.db'}"
    original = DATA / "otlp" / "latitude_manual_tools.json"
    assert _run(capsys, "import", "--from", "otlp", str(original), "--db", db)[0] == 0
    changed = tmp_path / "changed.json"
    changed.write_text(original.read_text().replace("What is the weather?", "What is the time?"))
    code, _, err = _run(capsys, "import", "--from", "otlp", str(changed), "--db", db)
    assert code == 1
    assert str(changed) in err and "msg_id" in err
