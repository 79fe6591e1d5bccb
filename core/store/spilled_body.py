"""A long line's message text in a temporary file: written as it is made, stored and compared a piece at a time.

A 100,000-record trace's text is about 160 MB. Held as one value, it was in memory beside the line it was made
from; SQLite's driver then copied it to bind it and SQLite again to build its row, and psycopg formats a whole
COPY row before it sends it. Spilled, the text is never whole in memory: SQLite stores it through incremental
blob I/O into a ``zeroblob`` of its length, PostgreSQL receives it in COPY's binary format, written here
(``core.store.bulk.copy_bytes``). Either way a piece of ``PIECE_BYTES`` at a time.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from collections.abc import Iterator

PIECE_BYTES = 1 << 20
"""Bytes read back from the file at a time."""


class SpilledBody:
    """A message's JSON text (UTF-8) in a temporary file, closed when the last holder of this lets it go."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile(buffering=PIECE_BYTES)  # noqa: SIM115 - closed by the finaliser
        weakref.finalize(self, self.file.close)

    def __len__(self) -> int:
        self.file.flush()
        return os.fstat(self.file.fileno()).st_size

    def pieces(self, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """The text from byte ``start`` to ``end`` (its end by default), ``PIECE_BYTES`` at a time."""
        end = len(self) if end is None else end
        while start < end:
            self.file.seek(start)
            piece = self.file.read(min(PIECE_BYTES, end - start))
            if not piece:
                return
            start += len(piece)
            yield piece

    def __getitem__(self, span: slice) -> bytes:
        """The bytes of ``span`` (a slice with a start and an end, no step): a record's text, read alone."""
        return b"".join(self.pieces(span.start, span.stop))

    def read(self) -> bytes:
        """The whole text, for what can only compare or parse it whole (a message stored before, read again)."""
        return self[0 : len(self)]

    def find(self, needle: bytes, start: int = 0) -> int:
        """Where ``needle`` first occurs at or after ``start``, as ``bytes.find``; -1 when it does not."""
        carried = b""  # the previous piece's last bytes: a needle may straddle two pieces
        at = start
        for piece in self.pieces(start):
            window = carried + piece
            found = window.find(needle)
            if found >= 0:
                return at - len(carried) + found
            carried = window[max(0, len(window) - len(needle) + 1) :]
            at += len(piece)
        return -1
