"""PostgreSQL's substring search: every message's text, case-folded (``core.store.casefold``) and cut into
overlapping chunks.

``ILIKE`` over ``messages.search_text`` lowercased each candidate's whole text on every search, a
long trace's 2 MB included, and read it out of the wide ``messages`` rows. Here the text is folded
once, at import, and stored in chunks of ``STRIDE`` characters that overlap by ``MAX_NEEDLE - 1``: a
needle of at most ``MAX_NEEDLE`` characters that occurs in a text lies whole inside one chunk (the
one holding its first character), so a plain ``LIKE`` on the chunks, under a trigram index, finds
exactly the texts that hold it. The fold keeps every character's place, so a match's position in a
chunk gives its position in ``messages.search_text``, where the snippet around it is read. Each chunk
carries its grams (``core.store.grams``), made here as SQLite's are, for needles too short for a trigram, and its
sampled 5-grams (``core.store.phase_grams``) for long ones; each conversation's id and title are folded and cut into
grams likewise, in ``conversation_grams`` (revisions 0031, 0032, 0035).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import Any

from sqlalchemy import ARRAY, Column, Connection, Integer, MetaData, Table, Text

from core.store.bulk import copy_rows, next_ids, text_array
from core.store.casefold import fold as fold  # re-exported: the chunks and their readers fold alike
from core.store.casefold import fold_table
from core.store.phase_grams import search_grams
from core.store.tables import CONVERSATIONS

STRIDE = 4096
"""Characters between the starts of two chunks of one text."""
MAX_NEEDLE = 256
"""The longest search text (after trimming), in characters; the overlap between chunks is one less."""

SEARCH_CHUNKS = Table(
    "search_chunks",
    MetaData(),  # PostgreSQL only, like SQLite's FTS5 table: not among the models both backends share
    Column("message_pk", Integer, primary_key=True),  # no foreign key: deleted with its message (revision 0034)
    Column("seq", Integer, primary_key=True),
    Column("conversation_pk", Integer, nullable=False),
    Column("folded", Text, nullable=False),
    Column("grams", ARRAY(Text(collation="C")), nullable=False),  # revisions 0025, 0034
)

CONVERSATION_GRAMS = Table(
    "conversation_grams",  # revision 0031
    MetaData(),
    Column("conversation_pk", Integer, primary_key=True),  # deleted with its conversation (revision 0034)
    Column("grams", ARRAY(Text(collation="C")), nullable=False),
    Column("folded_id", Text, nullable=False),  # revision 0032
    Column("folded_title", Text, nullable=False),
)
"""A conversation's id and title as the search reads them: folded, and their grams for needles too short for a
trigram. Written by the import; a trigger rewrites them when a writer changes an id or a title."""
FOLD_FUNCTION = "traceloupe_fold"
"""Search's case fold (``core.store.casefold``) as an SQL function (revision 0032), for the trigger: the server's own
``lower`` leaves "ς" as it is and folds by the database's locale (ASCII letters only under ``C``)."""
_NEXT_CONVERSATION_IDS = next_ids(CONVERSATIONS)


def fold_function_sql() -> str:
    """``CREATE FUNCTION`` of ``FOLD_FUNCTION``: ``translate`` by the fold's table for a text holding a non-ASCII
    character the fold changes; any other text by ``lower`` in the ``C`` collation (ASCII letters only, whatever
    the database's locale), as ``translate`` looks each character up in the whole table. Not ``STRICT``: the server
    inlines it only so (a NULL gives NULL all the same)."""
    table = fold_table()
    upper, lower = "".join(map(chr, table)), "".join(table.values())
    return f"""
CREATE OR REPLACE FUNCTION {FOLD_FUNCTION}(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fold$
  SELECT CASE WHEN value ~ '[{_ranges(point for point in table if point >= 128)}]'
  THEN translate(value, '{upper}', '{lower}') ELSE lower(value COLLATE "C") END
$fold$
"""


def _ranges(points: Iterable[int]) -> str:
    """A regular expression's bracket expression of ascending code points, consecutive ones as ranges."""
    runs: list[list[int]] = []
    for point in points:
        if runs and runs[-1][1] == point - 1:
            runs[-1][1] = point
        else:
            runs.append([point, point])
    return "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in runs)


def gram_array(grams: Collection[str]) -> str:
    """``grams`` as COPY's ``text[]`` literal, in the ``C`` collation's order (code points, as Python sorts): a GIN
    index sorts each array's entries before it stores them, and PostgreSQL's sort returns at once from a sorted one."""
    return text_array(sorted(grams))


def conversation_search_row(conversation_pk: int, conversation_id: str, title: str) -> dict[str, Any]:
    """A conversation's ``conversation_grams`` row, as COPY takes it."""
    folded_id, folded_title = fold(conversation_id), fold(title)
    grams = gram_array(search_grams(folded_id) | search_grams(folded_title))
    return {"conversation_pk": conversation_pk, "grams": grams, "folded_id": folded_id, "folded_title": folded_title}


def insert_conversations(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """COPY new conversations (the import looked them up under its lock: none is stored), and their search rows; their
    row ids, by conversation id (taken from the sequence first, so not read back)."""
    if not rows:
        return {}
    ids = list(conn.execute(_NEXT_CONVERSATION_IDS, {"n": len(rows)}).scalars())
    copy_rows(conn, CONVERSATIONS, [{"id": pk, **row} for pk, row in zip(ids, rows, strict=True)])
    copy_rows(
        conn,
        CONVERSATION_GRAMS,
        [conversation_search_row(pk, row["conversation_id"], row["title"]) for pk, row in zip(ids, rows, strict=True)],
    )
    return {row["conversation_id"]: pk for pk, row in zip(ids, rows, strict=True)}


def chunk_rows(message_pk: int, conversation_pk: int, text: str) -> Iterator[dict[str, Any]]:
    """The ``search_chunks`` rows of one message's searchable text (one row, maybe empty, for a short text),
    without their grams (``with_grams`` adds them; revision 0013 wrote chunks before there were any)."""
    folded = fold(text)
    for seq, start in enumerate(range(0, max(len(folded), 1), STRIDE)):
        piece = folded[start : start + STRIDE + MAX_NEEDLE - 1]
        yield {"message_pk": message_pk, "seq": seq, "conversation_pk": conversation_pk, "folded": piece}


Chunk = tuple[str, str]
"""A chunk of a searchable text as COPY takes it, short of its row ids: its folded text and its grams' array literal."""


def text_chunks(text: str) -> list[Chunk]:
    """The chunks of a searchable text in one piece with their grams, made as its message is read
    (``core.store.import_prepare``): the import's writer then only numbers them (``write_chunks``)."""
    return [(row["folded"], gram_array(search_grams(row["folded"]))) for row in chunk_rows(0, 0, text)]


def with_grams(row: dict[str, Any]) -> dict[str, Any]:
    """A chunk row with its distinct grams, computed here rather than by the server's ``traceloupe_grams``."""
    return {**row, "grams": list(search_grams(row["folded"]))}


def piece_chunk_rows(
    message_pk: int, conversation_pk: int, pieces: Iterable[str], piece_stride: int
) -> Iterator[dict[str, Any]]:
    """``chunk_rows`` of a text given in overlapping pieces ``piece_stride`` apart (``core.store.search_pieces``; a
    multiple of ``STRIDE``, the overlap at least a chunk's): each chunk cut from the one piece that holds it."""
    at = 0
    held: str | None = None
    for piece in pieces:  # one piece behind: the last one's chunks run to its end, the others' to the next piece
        if held is not None:
            yield from _chunks_of(message_pk, conversation_pk, fold(held), at, piece_stride)
            at += piece_stride
        held = piece
    folded = fold(held or "")
    yield from _chunks_of(message_pk, conversation_pk, folded, at, max(len(folded), 1))


def _chunks_of(message_pk: int, conversation_pk: int, folded: str, at: int, end: int) -> Iterator[dict[str, Any]]:
    """The chunks starting in ``folded[:end]``, a piece starting at ``at`` in its text."""
    for start in range(0, end, STRIDE):
        seq = (at + start) // STRIDE
        piece = folded[start : start + STRIDE + MAX_NEEDLE - 1]
        yield {"message_pk": message_pk, "seq": seq, "conversation_pk": conversation_pk, "folded": piece}


def write_chunks(
    conn: Connection,
    messages: Iterable[tuple[int, int, Iterable[str]]],
    piece_stride: int,
    made: Iterable[tuple[int, int, Sequence[Chunk]]] = (),
) -> None:
    """Store the chunks of messages given as (row id, conversation row id, searchable text's pieces), with their
    grams, in one COPY that cuts each chunk as it is sent: a long text's grams, as Python strings, weigh many times the
    text, so memory holds one chunk's at a time. ``made``: messages whose chunks were made as they were read
    (``text_chunks``), as (row id, conversation row id, chunks)."""
    cut = (
        {**row, "grams": gram_array(search_grams(row["folded"]))}
        for pk, conversation_pk, pieces in messages
        for row in piece_chunk_rows(pk, conversation_pk, pieces, piece_stride)
    )
    numbered = (
        {"message_pk": pk, "seq": seq, "conversation_pk": conversation_pk, "folded": folded, "grams": grams}
        for pk, conversation_pk, chunks in made
        for seq, (folded, grams) in enumerate(chunks)
    )
    copy_rows(conn, SEARCH_CHUNKS, chain(numbered, cut))


def contains_pattern(text: str) -> str:
    """The ``LIKE`` pattern (escape ``\\``) that finds ``text`` literally anywhere in a value."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def like_pattern(needle: str) -> str:
    """The ``LIKE`` pattern that finds the folded ``needle`` anywhere in a chunk."""
    return contains_pattern(fold(needle))
