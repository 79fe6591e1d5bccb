"""A mistyped ``--db`` is refused by the commands that only read; ``import`` and ``demo`` create and say so."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from web.cli import main
from web.list_query import KIND_FILTERS

READ_ONLY = {
    "conversations": [],
    "runs": [],
    "export": [],
    "serve": [],
    "db-status": [],
    "replay": ["--conversation", "c", "--provider", "openai", "--model", "m"],
}


@pytest.mark.parametrize("command", READ_ONLY)
def test_a_read_only_command_refuses_a_database_file_that_does_not_exist(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("web.cli.serve.serve", lambda *_, **__: 0)  # never a real server here
    db = tmp_path / "mydb.db"
    argv = ["db", "status"] if command == "db-status" else [command]
    assert main([*argv, "--db", str(db), *READ_ONLY[command]]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"traceloupe: no database at {db} (is --db mistyped?)")
    assert not db.exists()


def test_import_creates_the_database_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "new.db"
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"role": "user", "msg_type": "text", "content": "hi", "msg_id": "m"}) + "\n")
    assert main(["import", str(path), "--db", str(db)]) == 0
    assert f"creating a new database at {db}" in capsys.readouterr().err
    assert db.exists()
    assert main(["import", str(path), "--db", str(db)]) == 0
    assert "creating" not in capsys.readouterr().err


def test_serve_with_create_creates_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    served: list[argparse.Namespace] = []
    monkeypatch.setattr("web.cli.serve.serve", lambda store, settings, ns, **_: served.append(ns) or 0)
    db = tmp_path / "new.db"
    assert main(["serve", "--db", str(db), "--create"]) == 0
    assert served and db.exists()
    assert f"creating a new database at {db}" in capsys.readouterr().err


def test_an_unknown_kind_is_refused_with_the_valid_kinds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "t.db"
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"role": "user", "msg_type": "text", "content": "hi", "msg_id": "m"}) + "\n")
    assert main(["import", str(path), "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["conversations", "--db", str(db), "--kind", "banana"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip() == (
        f"traceloupe conversations: unknown kind 'banana'; expected one of: {', '.join(KIND_FILTERS)}"
    )
    assert main(["conversations", "--db", str(db), "--kind", "user:text"]) == 0


def test_serve_without_a_database_suggests_create(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("web.cli.serve.serve", lambda *_, **__: 0)  # never a real server here
    db = tmp_path / "mydb.db"
    assert main(["serve", "--db", str(db)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"traceloupe serve --db {db} --create" in line
    assert main(["conversations", "--db", str(db)]) == 2
    assert "--create" not in capsys.readouterr().err  # only serve takes it
    assert not db.exists()
