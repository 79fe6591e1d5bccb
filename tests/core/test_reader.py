"""``core.reader``: a long line of a file is read in one piece of its size, and split as ``readline`` splits it."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import orjson
import pytest

from core import reader
from core.reader import MiB, ReadLimits, StreamedRecord, _read_line, read_path


@pytest.mark.parametrize("limit", [10, MiB, MiB + 1, 3 * MiB, 64 * MiB])
def test_lines_are_split_as_readline_splits_them(limit: int) -> None:
    lengths = [0, 5, MiB - 1, MiB, MiB + 1, 2 * MiB + 7, 3]
    data = b"".join(bytes([65 + i]) * n + b"\n" for i, n in enumerate(lengths)) + b"no newline at the end"
    ours, theirs = io.BytesIO(data), io.BytesIO(data)
    while True:
        line = _read_line(ours, limit)
        assert line == theirs.readline(limit)
        if not line:
            break


def test_a_long_line_of_a_file_is_held_once_as_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``readline`` joins the pieces it read: twice the line at its peak."""
    monkeypatch.setattr(reader, "LONG_LINE_BYTES", 1)  # the record holds the line, its trace not yet read
    records = [{"role": "assistant", "content": "lorem ipsum " * 1000, "create_ts": i} for i in range(400)]
    message = {"role": "user", "msg_type": "text", "content": "q", "conversation_id": "c", "create_ts": 1,
               "intermediate_trace": {"records": records}}  # fmt: skip
    path = tmp_path / "long.jsonl"
    path.write_bytes(orjson.dumps(message) + b"\n")
    tracemalloc.start()
    try:
        read = list(read_path(path, limits=ReadLimits(max_record_bytes=64 * MiB), streamed=True))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [type(r) for r in read] == [StreamedRecord]
    assert peak < 1.5 * path.stat().st_size, (peak, path.stat().st_size)
