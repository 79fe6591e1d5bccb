"""``traceloupe users`` and ``traceloupe audit``: accounts made and changed on the command line, passwords never
taken as arguments nor printed, every change in the audit log."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from web.cli import main

PASSWORD = "a long enough password"


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))


def test_accounts_are_made_and_changed_and_audited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "team.db")
    _stdin(monkeypatch, PASSWORD + "\n")
    assert main(["users", "create", "ada", "--role", "admin", "--db", db, "--create"]) == 0
    _stdin(monkeypatch, PASSWORD + "\n")
    assert main(["users", "create", "bob", "--role", "viewer", "--db", db]) == 0
    assert main(["users", "set-role", "bob", "reviewer", "--db", db]) == 0
    assert main(["users", "disable", "bob", "--db", db]) == 0
    _stdin(monkeypatch, "another long password\n")
    assert main(["users", "reset-password", "bob", "--db", db]) == 0
    capsys.readouterr()
    assert main(["users", "list", "--json", "--db", db]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(u["name"], u["role"], u["disabled"]) for u in listed] == [
        ("ada", "admin", False),
        ("bob", "reviewer", True),
    ]
    assert main(["audit", "--json", "--since", "1h", "--db", db]) == 0
    out, err = capsys.readouterr()
    actions = [(e["action"], e["target"]) for e in json.loads(out)]
    assert actions == [
        ("user.reset-password", "bob"),
        ("user.disable", "bob"),
        ("user.set-role", "bob"),
        ("user.create", "bob"),
        ("user.create", "ada"),
    ]
    assert PASSWORD not in out + err


def test_a_bad_password_or_name_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "team.db")
    _stdin(monkeypatch, "short\n")
    assert main(["users", "create", "ada", "--role", "admin", "--db", db, "--create"]) == 1
    assert "at least 12 characters" in capsys.readouterr().err
    assert main(["users", "set-role", "nobody", "admin", "--db", db]) == 1
    assert main(["users", "list", "--json", "--db", db]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_on_a_terminal_the_password_is_asked_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "team.db")
    answers = iter([PASSWORD, PASSWORD + "typo"])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("getpass.getpass", lambda prompt: next(answers))
    assert main(["users", "create", "ada", "--role", "admin", "--db", db, "--create"]) == 1
    assert "differ" in capsys.readouterr().err
