"""``traceloupe check`` on bad input: one clear line naming file and line, exit 2, no traceback, no hang."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

MB = 1024 * 1024
GOOD = b'{"role":"user","msg_type":"text","content":"hi","msg_id":"m1"}\n'


def _huge_line() -> bytes:
    return b'{"role":"user","msg_type":"text","content":"' + b"a" * (50 * MB) + b'"}\n'


BAD_INPUTS: dict[str, tuple[str, Callable[[], bytes], str]] = {
    # name: (file name, content, what the line must say)
    "not-json": ("notes.jsonl", lambda: GOOD + b"this is not json\n", "notes.jsonl:2"),
    "truncated": ("cut.jsonl", lambda: GOOD + GOOD[:30], "cut.jsonl:2"),
    "invalid-utf8": ("bytes.jsonl", lambda: b'{"role":"user","msg_type":"text","content":"\xff\xfe"}\n', "UTF-8"),
    "deep-nesting": ("deep.json", lambda: b"[" * 100_000 + b"]" * 100_000, "depth"),
    "deep-nesting-jsonl": ("deep.jsonl", lambda: GOOD + b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "deep.jsonl:2"),
    "deep-histories": (
        "histories.jsonl",
        lambda: b'{"role":"user","msg_type":"history","content":[' * 450 + b'{"role":"user"}' + b"]}" * 450 + b"\n",
        "nested too deeply",
    ),
    "50mb-line": ("big.jsonl", _huge_line, "big.jsonl:1"),
    "unknown-kind": ("kind.jsonl", lambda: b'{"role":"user","msg_type":"sticker"}\n', "'user:sticker'"),
    "unknown-role": ("role.json", lambda: b'[{"role":"robot"}]', "$[0].role"),
    "wrong-type": ("type.jsonl", lambda: b'{"role":"assistant","msg_type":"text","content":5}\n', "$.content"),
    "not-a-message": ("scalar.json", lambda: b"42", "expected a message object"),
    "empty-json": ("empty.json", lambda: b"  \n", "empty"),
}


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_is_one_clear_line_and_exit_2(case: str, tmp_path: Path) -> None:
    name, make, expected = BAD_INPUTS[case]
    path = tmp_path / name
    path.write_bytes(make())
    proc = subprocess.run(
        [sys.executable, "-m", "web.cli", "check", str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert str(path) in lines[0]
    assert expected in lines[0]
    assert len(lines[0]) < 500


def test_clean_file_exits_0_and_prints_nothing_on_stdout(tmp_path: Path) -> None:
    path = tmp_path / "ok.jsonl"
    path.write_bytes(GOOD * 3)
    proc = subprocess.run([sys.executable, "-m", "web.cli", "check", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0
    assert proc.stdout == ""
    assert "3 messages" in proc.stderr and "clean" in proc.stderr


def test_missing_file_is_exit_2(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "web.cli", "check", str(tmp_path / "nope.jsonl")], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "nope.jsonl" in proc.stderr and "Traceback" not in proc.stderr
