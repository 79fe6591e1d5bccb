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
