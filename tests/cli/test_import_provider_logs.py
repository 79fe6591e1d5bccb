"""``traceloupe import`` of provider request logs: ``auto`` knows a cassette, each exchange is read as its
provider, a second import changes nothing, and ``--verify`` prints the round trip, exiting 1 on a difference no
normalisation explains (the file stored all the same)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from web.cli import main

CORPUS = Path(__file__).parents[1] / "formats" / "data" / "provider_logs"
CASSETTE = CORPUS / "gemini" / "test_google_tool_output.yaml"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_cassette_is_read_as_a_provider_log_and_a_second_import_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'a.db'}"
    code, out, err = _run(capsys, "import", "--from", "auto", str(CASSETTE), "--db", db)
    assert code == 0, err
    assert f"{CASSETTE}: read as provider-log" in err
    assert "imported 0 messages" not in out
    code, _, _ = _run(capsys, "import", "--from", "auto", str(CASSETTE), "--db", db, "-q")
    assert code == 0
    code, listed, _ = _run(capsys, "conversations", "--db", db, "--json")
    assert code == 0 and len(json.loads(listed)) == 1


def test_verify_prints_each_difference_with_its_normalisation_and_exits_0_when_all_are_documented(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'a.db'}"
    code, out, err = _run(capsys, "import", "--from", "gemini", str(CASSETTE), "--db", db, "--verify")
    assert code == 0, err
    assert "interactions[1] (gemini)" in out


def test_verify_exits_1_naming_a_difference_no_normalisation_explains_and_still_stores_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'a.db'}"
    block = {"type": "text", "text": "hi", "citations": None}  # a key of no neutral place, no normalisation
    request = {
        "model": "claude-3-5-haiku-latest",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": [block]}],
    }
    response = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "hello"}]}
    log = tmp_path / "pairs.jsonl"
    log.write_text(json.dumps({"request": request, "response": response}) + "\n")
    code, out, err = _run(capsys, "import", "--from", "provider-log", str(log), "--db", db, "--verify")
    assert code == 1
    assert "/messages/0/content/0/citations" in out
    assert "1 difference from the recorded requests that no normalisation explains" in err
    code, listed, _ = _run(capsys, "conversations", "--db", db, "--json")
    assert len(json.loads(listed)) == 1


def test_verify_refuses_a_format_that_keeps_no_provider_body(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans = Path(__file__).parents[1] / "formats" / "data" / "otlp" / "latitude_manual_tools.json"
    code, _, err = _run(capsys, "import", "--from", "otlp", str(spans), "--db", f"sqlite:///{tmp_path / 'a.db'}",
                        "--verify")  # fmt: skip
    assert code == 1
    assert "--verify takes a provider log" in err


def test_verify_of_standard_input_is_refused_before_anything_is_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import sys

    db = f"sqlite:///{tmp_path / 'a.db'}"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(CASSETTE.read_bytes()))))
    code, _, err = _run(capsys, "import", "--from", "provider-log", "-", "--db", db, "--verify")
    assert code == 1
    assert "name the file, not standard input" in err
    code, listed, _ = _run(capsys, "conversations", "--db", db, "--json")
    assert json.loads(listed) == []
