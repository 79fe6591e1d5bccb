"""A message's searchable text in overlapping pieces, so a long trace's text is never one value to bind or index.

A 100,000-record trace has about 124 MB of searchable text. As one value, SQLite copied it to bind it and again
to build its row, and FTS5 indexed it as one document, its pending terms several times the text. So the text
is cut, as it is collected (``PieceCutter``), into pieces of ``PIECE_STRIDE`` characters that overlap by
``MAX_NEEDLE - 1``: a needle of at most ``MAX_NEEDLE`` characters lies whole inside the piece holding its first
character, and each piece is indexed alone. The first piece stays in ``messages.search_text`` (most messages
have only that one); the others are rows of ``message_search_pieces`` (revision 0028), numbered from 1.
``PIECE_STRIDE`` is a multiple of PostgreSQL's chunk stride, so every search chunk lies inside one piece.
"""

from __future__ import annotations

import io
import tempfile
import weakref
from collections.abc import Iterable, Iterator, Sequence

from sqlalchemy import Connection, select

from core.store.pg_search import MAX_NEEDLE, STRIDE
from core.store.tables import MESSAGE_SEARCH_PIECES

PIECE_STRIDE = 256 * STRIDE
"""Characters between the starts of two pieces of one text (1 MiB of ASCII)."""
OVERLAP = MAX_NEEDLE - 1
PIECE_CHARS = PIECE_STRIDE + OVERLAP
"""The longest piece. A text of at most ``PIECE_STRIDE`` characters is one piece; a piece starts at every multiple
of ``PIECE_STRIDE`` before the text's end, as PostgreSQL's chunks do at every multiple of theirs."""

_P = MESSAGE_SEARCH_PIECES.c


class SearchPieces:
    """A text's pieces: the first in memory, the others (a long trace's) in a temporary file until they are stored,
    read back one at a time, as often as a writer needs them."""

    def __init__(self, first: str, spill: _Spill | None = None, spans: Sequence[tuple[int, int]] = ()) -> None:
        self.first = first
        self._spill = spill
        self._spans = list(spans)
        self.drop_nul = False
        """Read each later piece without U+0000 (PostgreSQL's text cannot hold it), as the first was made."""

    def __len__(self) -> int:
        return 1 + len(self._spans)

    def __iter__(self) -> Iterator[str]:
        yield self.first
        yield from self.later()

    def after(self, first: str) -> Iterator[str]:
        """``first`` (the stored first piece) and the later pieces."""
        yield first
        yield from self.later()

    def later(self) -> Iterator[str]:
        """The pieces after the first, each read from the file as it is reached."""
        for start, size in self._spans:
            assert self._spill is not None
            self._spill.file.seek(start)
            piece = self._spill.file.read(size).decode()
            yield piece.replace("\x00", "") if self.drop_nul else piece


class PieceCutter:
    """Texts joined by newlines (empty ones left out), cut into pieces as they come: the first piece and the one
    being cut are held, the others go to a temporary file."""

    def __init__(self) -> None:
        self._first: str | None = None
        self._spill: _Spill | None = None
        self._spans: list[tuple[int, int]] = []
        self._parts: list[str] = []
        self._size = 0
        self._any = False

    def add(self, text: str) -> None:
        if not text:
            return
        if self._any:
            self._parts.append("\n")
            self._size += 1
        self._any = True
        self._parts.append(text)
        self._size += len(text)
        if self._size > PIECE_CHARS:  # a next piece exists: this one is whole
            self._cut(final=False)

    def done(self) -> SearchPieces:
        """Every piece, the first one first (one, maybe empty, for a short text)."""
        self._cut(final=True)
        assert self._first is not None
        done = SearchPieces(self._first, self._spill, self._spans)
        self._first, self._spill, self._spans = None, None, []
        return done

    def _cut(self, *, final: bool) -> None:
        text = "".join(self._parts)
        while len(text) > PIECE_CHARS or (final and len(text) > PIECE_STRIDE):
            self._keep(text[:PIECE_CHARS])
            text = text[PIECE_STRIDE:]
        if final:
            self._keep(text)
            text = ""
        self._parts, self._size = [text], len(text)

    def _keep(self, piece: str) -> None:
        if self._first is None:
            self._first = piece
            return
        if self._spill is None:
            self._spill = _Spill()
        data = piece.encode()
        self._spans.append((self._spill.file.seek(0, io.SEEK_END), len(data)))
        self._spill.file.write(data)


class _Spill:
    """A temporary file, closed when the last holder of this (a cutter, then its pieces) lets it go."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile()  # noqa: SIM115 - closed by the finaliser, with the pieces it holds
        weakref.finalize(self, self.file.close)


def cut(text: str) -> list[str]:
    """``text``'s pieces, as ``PieceCutter`` makes them."""
    cutter = PieceCutter()
    cutter.add(text)
    return list(cutter.done())


def whole(pieces: Sequence[str]) -> str:
    """The text of its pieces, each overlap once."""
    return "".join(piece[:PIECE_STRIDE] for piece in pieces[:-1]) + (pieces[-1] if pieces else "")


def stored_pieces(conn: Connection, message_pk: int, head: str) -> Iterable[str]:
    """A stored message's pieces, ``head`` (its ``messages.search_text``) first, each read as it is reached."""
    yield head
    seqs = conn.execute(select(_P.seq).where(_P.message_pk == message_pk).order_by(_P.seq)).scalars().all()
    for seq in seqs:
        yield conn.execute(select(_P.text).where(_P.message_pk == message_pk, _P.seq == seq)).scalar_one()
