"""``traceloupe keys``: a key printed once on stdout, listed by its first characters only, revoked by id."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from core.store import Store
from web.cli import main


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "keys.db"
    Store.open(str(path)).close()
    return str(path)


def test_create_prints_the_key_once_and_list_never_shows_it(
    db: str, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    assert main(["keys", "create", "--scope", "ingest", "--name", "agent", "--expires", "2999-01-01", "--db", db]) == 0
    out, err = capsys.readouterr()
    key = out.strip()
    assert key.startswith("tlk_") and "\n" not in key and key not in err
    with Store.open(db) as store:
        assert store.api_keys.verify(key, "ingest") is not None
    assert main(["keys", "list", "--db", db]) == 0
    assert main(["keys", "list", "--json", "--db", db]) == 0
    listed, _ = capsys.readouterr()
    assert "agent" in listed and key[:12] in listed and key not in listed
    assert main(["keys", "revoke", "1", "--db", db]) == 0
    assert "revoked" in capsys.readouterr().out
    with Store.open(db) as store:
        assert store.api_keys.verify(key, "ingest") is None
    assert key not in caplog.text


def test_bad_input_is_one_line_and_an_exit_code(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "revoke", "7", "--db", db]) == 1
    assert main(["keys", "create", "--scope", "owner", "--db", db]) == 2
    assert main(["keys", "create", "--scope", "ingest", "--expires", "soon", "--db", db]) == 2
    assert main(["keys", "create", "--scope", "ingest", "--expires", "2001-01-01", "--db", db]) == 1
    assert "tlk_" not in capsys.readouterr().out


def test_a_key_made_and_revoked_is_in_the_audit_log_without_the_key(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    assert main(["keys", "create", "--scope", "read", "--name", "grafana", "--db", db]) == 0
    key = capsys.readouterr().out.strip()
    assert main(["keys", "revoke", "1", "--db", db]) == 0
    assert main(["keys", "revoke", "1", "--db", db]) == 0  # already revoked: nothing done, nothing recorded
    capsys.readouterr()
    assert main(["audit", "--json", "--db", db]) == 0
    out = capsys.readouterr().out
    events = json.loads(out)
    assert [(e["action"], e["target"], e["client"]) for e in events] == [
        ("key.revoke", "key 1", "command line"),
        ("key.create", "key 1", "command line"),
    ]
    assert events[1]["detail"] == {"scope": "read", "name": "grafana", "prefix": key[:12], "user": None}
    assert key not in out and key[12:20] not in out


def test_a_key_for_an_account_that_does_not_exist_is_refused(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "create", "--scope", "write", "--user", "nobody", "--db", db]) == 1
    out, err = capsys.readouterr()
    assert "no account 'nobody'" in err and "tlk_" not in out
    with Store.open(db) as store:
        assert store.api_keys.list() == []
