"""Terminal escape injection: a value from a trace cannot write the clipboard, retitle the window,
clear the screen, overwrite a line or reorder text when the CLI prints it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.store import NewRun, Store
from web.cli import main
from web.cli.terminal import cell, printable
from web.devtools.stub_provider import Reply, StubServer

# OSC 52 (clipboard write), OSC 0 (window title), CSI 2J (clear), CR + erase line, a C1 CSI, a bidi override
HOSTILE = "\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x1b[2J\r\x1b[K\x9b31m\u202eevil\u2066"
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _assert_inert(text: str) -> None:
    assert not UNSAFE.search(text), repr(text)
    assert "\\x1b]52" in text or "\\x1b" in text  # shown, not dropped


def test_printable_escapes_every_control_and_keeps_text() -> None:
    shown = printable(f"id {HOSTILE} é 中文")
    assert shown == ("id \\x1b]52;c;cHduZWQ=\\x07\\x1b]0;owned\\x07\\x1b[2J\\r\\x1b[K\\x9b31m\\u202eevil\\u2066 é 中文")
    assert printable("two\nlines\tand\x1b[K", multiline=True) == "two\nlines\tand\\x1b[K"
    assert printable("one\nline") == "one\\nline"


def test_a_table_cell_is_cut_with_an_ellipsis() -> None:
    assert cell("abcdefghij", 6) == "abcde…"
    assert cell("abc", 6) == "abc   "
    assert cell("a\x1b[2Jb", 20).rstrip() == "a\\x1b[2Jb"


def _damaged(msg_id: str, conversation_id: str = "c") -> str:
    return json.dumps({"role": "assistant", "content": "hi", "msg_id": msg_id, "conversation_id": conversation_id})


def test_a_forged_check_finding_cannot_be_produced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    forged = f"{path}:2: $ msg_id=ok: a forged finding"
    # One damaged record whose id erases its own line and writes a fake finding, then starts another line.
    path.write_text(_damaged(f"m1\r\x1b[K{forged}\n{forged}") + "\n")
    assert main(["check", str(path)]) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}:1: ")
    assert not any(line.startswith(forged) for line in (out + err).splitlines())
    assert "\r" not in out and "\x1b" not in out
    assert "m1\\r\\x1b[K" in lines[0]


def test_repair_and_payload_lines_are_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_damaged(HOSTILE) + "\n")
    assert main(["repair", str(path), "-o", str(tmp_path / "out.jsonl")]) == 0
    assert main(["payload", str(path), "--provider", "openai"]) == 1  # the seed's contract error names the id
    _, err = capsys.readouterr()
    _assert_inert(err)
    # repair's line and payload's error (the seed's message and its English explanation) each show the id escaped.
    assert err.count("\\x1b]52") == 3


def test_import_error_lines_are_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"shared{HOSTILE}.jsonl"
    path.write_text("not json\n")
    assert main(["import", str(path), "--db", str(tmp_path / "t.db")]) == 1
    _, err = capsys.readouterr()
    _assert_inert(err)


@pytest.fixture
def hostile_db(tmp_path: Path) -> str:
    db = str(tmp_path / "t.db")
    record = {
        "role": "user", "msg_type": "text", "content": f"title {HOSTILE}", "msg_id": f"u{HOSTILE}",
        "conversation_id": f"conv{HOSTILE}", "create_ts": 1_700_000_000_000,
    }  # fmt: skip
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with Store.open(db) as store:
        store.import_path(path)
        run, _ = store.claim_run(NewRun(f"conv{HOSTILE}", provider="openai", model=f"m{HOSTILE}", request_body={}))
        store.finish_run(run.run_id, status="http_error", error=f"the provider answered HTTP 500: {HOSTILE}")
    return db


@pytest.mark.parametrize("command", ["conversations", "runs"])
def test_listings_are_inert(command: str, hostile_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--db", hostile_db]) == 0
    out, _ = capsys.readouterr()
    _assert_inert(out)


def test_replay_output_is_inert(
    hostile_db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stub = StubServer().start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-12345678")
        monkeypatch.setenv("OPENAI_BASE_URL", f"{stub.base_url}/v1")
        stub.state.script += [Reply(text=f"line one\nline two {HOSTILE}"), Reply(status=500, raw_body=HOSTILE)]
        argv = ["replay", "--db", hostile_db, "--conversation", f"conv{HOSTILE}", "--provider", "openai"]
        assert main([*argv, "--model", "m"]) == 0  # a model with control characters is refused (test_flags)
        assert main([*argv, "--model", "m"]) == 3
    finally:
        stub.shutdown()
        stub.server_close()
    out, err = capsys.readouterr()
    assert out.startswith("line one\nline two \\x1b]52")  # the reply keeps its lines, not its escapes
    _assert_inert(out.replace("\n", " ") + err)


def test_the_import_progress_bar_label_is_inert() -> None:
    import io

    from web.cli.importer import _Bar

    stream = io.StringIO()
    bar = _Bar(f"big{HOSTILE}.jsonl", stream)
    bar.show("reading", 1, 2)
    bar.done()
    drawn = stream.getvalue()
    assert drawn.count("\x1b") == 1 and drawn.endswith("\r\x1b[K")  # only the bar's own erase
    assert "\\x1b]52" in drawn
