"""The store commands as a script sees them: summary lines, JSON output, stdin, exit codes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.store import NewRun, Store, importer
from tests.store.store_factory import count_nested, dataset
from web.cli import main

CLI = [sys.executable, "-c", "import sys; from web.cli import main; sys.exit(main())"]


def _write(path: Path, seed: int, conversations: int) -> list[dict[str, Any]]:
    messages = dataset(seed=seed, conversations=conversations, turns=2, records=5)
    path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
    return messages


def test_import_summary_and_conversations_json(db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messages = _write(tmp_path / "a.jsonl", 31, 3)
    assert main(["import", str(tmp_path / "a.jsonl"), "--db", db_url]) == 0
    out = capsys.readouterr().out.strip()
    damaged = sum(count_nested(m)[1] for m in messages)
    assert damaged >= 6  # one damaged record per 5-record trace, plus any in forwarded histories
    expected = (
        f"imported {len(messages)} messages into 3 conversations (3 new), {damaged} damaged records; 0 already stored"
    )
    assert out == f"{tmp_path / 'a.jsonl'}: {expected}"
    assert main(["conversations", "--json", "--db", db_url]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted(r["conversation_id"] for r in rows) == ["s31-c0", "s31-c1", "s31-c2"]
    for row in rows:
        mine = [m for m in messages if m["conversation_id"] == row["conversation_id"]]
        assert (row["turns"], row["runs"], row["messages"]) == (2, 0, 4)
        assert row["records"] == sum(count_nested(m)[0] for m in mine)
        assert row["damaged"] == sum(count_nested(m)[1] for m in mine)
    assert main(["conversations", "--db", db_url, "--search", "answer 1", "--limit", "1"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("conversation") and len(table) == 2


def test_runs_command(db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path / "a.jsonl", 32, 2)
    with Store.open(db_url) as store:
        store.import_path(tmp_path / "a.jsonl")
        run = store.start_run(NewRun("s32-c0", provider="openai", model="gpt-x", request_body={"model": "gpt-x"}))
        store.finish_run(run.run_id, status="error", error="401 bad key")
    assert main(["runs", "--json", "--db", db_url, "--conversation", "s32-c0"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["run_id"], row["status"], row["error"], row["provider"]) == (
        run.run_id,
        "error",
        "401 bad key",
        "openai",
    )
    assert main(["runs", "--json", "--db", db_url, "--conversation", "s32-c1"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["runs", "--db", db_url, "--conversation", "nope"]) == 1
    assert "no conversation 'nope'" in capsys.readouterr().err
    assert main(["runs", "--db", db_url]) == 0
    assert "gpt-x" in capsys.readouterr().out


def test_import_from_stdin_without_a_progress_bar(db_url: str, tmp_path: Path) -> None:
    """A real process: stdin import, and no progress bar when stderr is not a terminal (a file of several pipe
    buffers and more than one of the importer's chunks of messages)."""
    big = tmp_path / "big.jsonl"
    messages = _write(big, 33, 300)  # > 8 MiB would be slow here; the bar also needs a TTY, which a pipe is not
    assert len(messages) > importer.CHUNK
    proc = subprocess.run(
        [*CLI, "import", "-", "--db", db_url],
        input=big.read_bytes(),
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    assert proc.stdout.decode().startswith(f"<stdin>: imported {len(messages)} messages into 300 conversations")


def test_unreachable_database_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["conversations", "--db", str(tmp_path / "missing-dir" / "x.db")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import web.cli.importer as importer_cli

    path = tmp_path / "a.jsonl"
    _write(path, 34, 120)  # 480 messages
    terminal = _Terminal()
    monkeypatch.setattr(importer_cli, "PROGRESS_MIN_BYTES", 0)  # every file counts as big
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["import", str(path), "--db", db_url]) == 0
    drawn = terminal.getvalue()
    assert "importing" in drawn and "100%" in drawn and "\r" in drawn
    assert drawn.endswith("\r\033[K")  # the bar erases itself; the summary goes to stdout
    assert "imported 480 messages" in capsys.readouterr().out
    terminal.seek(0)
    terminal.truncate()
    assert main(["import", str(path), "--db", db_url, "--quiet"]) == 0
    assert terminal.getvalue() == ""


@pytest.mark.parametrize("command", [["export"], ["conversations", "--json"]], ids=["export", "conversations"])
def test_a_listing_into_a_closed_pipe_stops_quietly(db_url: str, tmp_path: Path, command: list[str]) -> None:
    """``traceloupe export | head -1``, ``traceloupe conversations --json | head``: no BrokenPipeError traceback."""
    _write(tmp_path / "a.jsonl", 35, 600)  # more than a pipe's buffer, in either listing
    with Store.open(db_url) as store:
        store.import_path(tmp_path / "a.jsonl")
    proc = subprocess.Popen([*CLI, *command, "--db", db_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0
    assert b"Traceback" not in err and err == b""


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"text": "bottom"}
    for _ in range(levels - 1):
        value = {"a": [value]} if len(value) == 1 else {"a": value}
    return value


def test_runs_json_prints_a_stored_provider_answer_nested_300_levels(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path / "a.jsonl", 34, 1)
    answer = {"id": "r1", "choices": [{"message": {"content": "x", "extra": _nested(300)}}]}
    with Store.open(db_url) as store:
        store.import_path(tmp_path / "a.jsonl")
        run = store.start_run(NewRun("s34-c0", provider="openai", model="gpt-x", request_body={"model": "gpt-x"}))
        store.finish_run(run.run_id, status="ok", response_body=answer)
    assert main(["runs", "--json", "--db", db_url]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["response_body"] == answer


def test_conversations_json_writes_each_conversation_as_it_is_read(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "a.jsonl", 33, 3)
    assert main(["import", str(tmp_path / "a.jsonl"), "--db", db_url]) == 0
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out))
    written_before_next: list[bytes] = []
    listed = Store.iter_conversations

    def watched(self: Store, q: Any = None) -> Any:
        for summary in listed(self, q):
            yield summary
            written_before_next.append(out.getvalue())  # what stdout held when the next one was asked for

    monkeypatch.setattr(Store, "iter_conversations", watched)
    assert main(["conversations", "--json", "--db", db_url]) == 0
    rows = json.loads(out.getvalue())
    assert len(rows) == 3
    assert rows[0]["conversation_id"].encode() in written_before_next[0]
