"""An inspect_ai ``.eval`` zip is read a sample at a time, from a file or from a stream that cannot seek."""

from __future__ import annotations

import io
from pathlib import Path

from core.formats.events import ModelCall
from core.formats.inspect_ai import read_inspect

EVAL = Path(__file__).parents[2] / "formats" / "data" / "inspect" / "log_streaming.eval"


class _Reads(io.BufferedReader):
    """A file that remembers the largest piece read from it at once."""

    largest = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.largest = max(self.largest, len(data))
        return data


class _Pipe(io.RawIOBase):
    """A stream that cannot seek, as stdin fed by a pipe."""

    def __init__(self, data: bytes) -> None:
        self.data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        chunk = self.data.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


def _samples(events: list[object]) -> list[str]:
    return sorted({e.source.source_id.split("/")[0] for e in events if isinstance(e, ModelCall) and e.source.source_id})


def test_an_eval_file_is_read_without_reading_the_zip_whole() -> None:
    with _Reads(io.FileIO(EVAL)) as handle:
        events = list(read_inspect(handle, str(EVAL)))
        assert 0 < handle.largest < EVAL.stat().st_size / 2  # a member, a directory: never the file whole
    assert len(_samples(events)) == 4  # two samples, two epochs each


def test_an_eval_from_a_stream_that_cannot_seek_reads_the_same() -> None:
    with EVAL.open("rb") as handle:
        from_file = list(read_inspect(handle, str(EVAL)))
    piped = io.BufferedReader(_Pipe(EVAL.read_bytes()))
    assert not piped.seekable()
    assert list(read_inspect(piped, str(EVAL))) == from_file
