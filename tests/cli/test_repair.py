"""``traceloupe repair`` (and ``check`` before and after it): clean lines kept byte for byte, each inferred class
reported, the TFROB-299 incident healed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

from core import MESSAGE_ADAPTER, BaseMessage
from tests.core.test_tfrob299 import pre_fix_json


def _traceloupe(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it, in a process of its own."""
    return subprocess.run([sys.executable, "-m", "web.cli", *map(str, args)], capture_output=True, text=True)


def test_repair_cli_keeps_clean_lines_byte_for_byte_and_reports_what_it_inferred(tmp_path: Path) -> None:
    clean = b'{"z":1,"role":"user","msg_type":"text","content":"ok","msg_id":"c1"}'
    damaged = orjson.dumps({"role": "user", "msg_type": "text", "msg_id": "u", "intermediate_trace": {"records": [
        {"role": "user", "content": "https://x.example/p.jpg", "msg_id": "img"}]}})  # fmt: skip
    src = tmp_path / "in.jsonl"
    src.write_bytes(clean + b"\n\n" + damaged + b"\n")
    out = tmp_path / "out.jsonl"
    proc = _traceloupe("repair", src, "-o", out)
    assert proc.returncode == 0
    first, second = out.read_bytes().splitlines()
    assert first == clean
    record = orjson.loads(second)["intermediate_trace"]["records"][0]
    assert record["msg_type"] == "image"
    assert f"{src}:3: $.intermediate_trace.records[0] msg_id=img: user -> ImageMessage (guessed" in proc.stderr
    assert "still missing: intermediate_trace" in proc.stderr


def test_repair_cli_can_write_over_its_input(tmp_path: Path) -> None:
    src = tmp_path / "in.json"
    src.write_bytes(orjson.dumps([{"role": "assistant", "content": "x", "msg_id": "d"}]))
    proc = _traceloupe("repair", src, "-o", src)
    assert proc.returncode == 0
    (line,) = src.read_bytes().splitlines()
    assert orjson.loads(line)["msg_type"] == "text"
    assert type(MESSAGE_ADAPTER.validate_json(line)) is not BaseMessage


def test_check_flags_and_repair_heals_through_the_cli(tmp_path: Path) -> None:
    incident = tmp_path / "incident.jsonl"
    incident.write_bytes(pre_fix_json() + b"\n")
    check = _traceloupe("check", incident)
    assert check.returncode == 1
    (line,) = check.stdout.splitlines()
    assert "msg_id=a-1" in line and "$.intermediate_trace.records[0]" in line and f"{incident}:1" in line
    fixed = tmp_path / "fixed.jsonl"
    rep = _traceloupe("repair", incident, "-o", fixed)
    assert rep.returncode == 0, rep.stderr
    assert "AssistantTextMessage" in rep.stderr
    recheck = _traceloupe("check", fixed)
    assert recheck.returncode == 0 and recheck.stdout == ""
