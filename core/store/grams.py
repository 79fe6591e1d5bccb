"""Search text shorter than a trigram, through an index of the characters and pairs of characters of each text.

A trigram index cannot answer a needle of one or two characters, so such a search read every message
(on SQLite through a Python fold). Here each folded text (``core.store.casefold``) is indexed by the set
of its characters and of its pairs of adjacent characters: a needle of one or two characters occurs in
the text exactly when it is one of them, so the index alone answers, with nothing to check after.
SQLite keeps them in a contentless FTS5 table (``message_grams``, written beside each message, each
gram an ASCII token); PostgreSQL in the ``grams`` column of ``search_chunks`` (revision 0025), under a GIN
index, whose overlapping chunks hold every pair whole. Both are written from ``grams_of``, so they agree.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import Connection, text

from core.store.casefold import fold

MAX_GRAM = 2
"""The longest needle the grams answer; longer ones go to the trigram indexes."""
TOKEN_CACHE = 1 << 16
"""Tokens remembered: a text's grams are mostly the same few thousand pairs, each spelled once, not per message."""
GRAMS_TABLE = "message_grams"
"""SQLite: the FTS5 table of each message's grams, its rowid the message's id (revision 0020)."""
CONVERSATION_GRAMS_TABLE = "conversation_grams"
"""SQLite: the FTS5 table of each conversation's id and title grams, its rowid the conversation's (revision 0020),
kept by triggers calling ``GRAMS_FUNCTION``."""
GRAMS_FUNCTION = "traceloupe_grams"
"""The SQL function giving a text's grams: on PostgreSQL an array of a folded text's (SQL, revision 0020; gives
the conversations' grams, revision 0031), on SQLite the FTS5 document of ``tokens``
(Python, registered on every connection, as the triggers need it)."""
# Revision 0020's PostgreSQL function (revision 0035's adds sampled 5-grams: ``core.store.phase_grams``).
# Pairs come from the characters zipped with themselves shifted by one: ``substr`` walks a multibyte text from its
# start, so a pair per ``substr`` made a chunk cost its length squared.
GRAMS_FUNCTION_SQL = """
CREATE FUNCTION traceloupe_grams(folded text) RETURNS text[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT c || ARRAY(SELECT a || b FROM unnest(c[1:cardinality(c) - 1], c[2:cardinality(c)]) AS pair(a, b))
  FROM (SELECT string_to_array(folded, NULL) AS c) AS chars
$$
"""


def grams_of(folded: str) -> set[str]:
    """Every character and every pair of adjacent characters of a folded text, once each."""
    if len(folded) < LONG_TEXT:
        found = set(map(operator.add, folded, folded[1:]))  # the pairs: each character joined to the next
        found.update(folded)
        return found
    found = set()
    for start in range(0, len(folded) - 1, LONG_TEXT):  # blocks overlapping by a character: each pair whole in one
        found |= _grams_by_word(folded[start : start + LONG_TEXT + 1])
    return found


LONG_TEXT = 1 << 16
"""The length from which a text's grams are made word by word (``_grams_by_word``), a block of it at a time (memory
holds one block's words)."""


def _grams_by_word(folded: str) -> set[str]:
    """``grams_of`` made from each distinct word (the text split at spaces) once, and the pairs across each space: a
    long text repeats its words, and a string made for each of its pairs, nearly all of them repeats, costs a third of
    a long trace's SQLite import. A short text repeats too few for the split to pay."""
    words = folded.split(" ")
    found = {" "} if len(words) > 1 else set()
    for word in set(words):
        found.update(word)
        found.update(map(operator.add, word, word[1:]))
    found.update(word[-1] + " " for word in set(words[:-1]) if word)  # a word and the space after it
    found.update(" " + word[0] for word in set(words[1:]) if word)  # a space and the word after it
    if "  " in folded:
        found.add("  ")
    return found


@functools.lru_cache(maxsize=TOKEN_CACHE)
def token(gram: str) -> str:
    """``gram`` (folded) as one FTS5 token: its code points in hexadecimal, so any character is plain ASCII."""
    return "g" + "x".join(f"{ord(char):x}" for char in gram)


def tokens(search_text: str) -> str:
    """The FTS5 document of a message's grams: every character and every pair of the folded text, once."""
    return " ".join(map(token, grams_of(fold(search_text))))


def pieces_tokens(pieces: Iterable[str]) -> str:
    """``tokens`` of a text given in overlapping pieces (``core.store.search_pieces``), folded a piece at a time:
    each pair of adjacent characters lies whole in a piece."""
    found: set[str] = set()
    for piece in pieces:
        found |= grams_of(fold(piece))
    return " ".join(token(gram) for gram in found)


def _rows(messages: Iterable[tuple[int, str | Iterable[str]]]) -> Iterator[dict[str, Any]]:
    for pk, searched in messages:
        yield {"pk": pk, "grams": tokens(searched) if isinstance(searched, str) else pieces_tokens(searched)}


def write_grams(conn: Connection, messages: Iterable[tuple[int, str | Iterable[str]]]) -> None:
    """SQLite: index the grams of messages given as (row id, searchable text, whole or in its pieces)."""
    rows = list(_rows(messages))
    if rows:
        statement = f"INSERT INTO {GRAMS_TABLE}(rowid, grams) VALUES (:pk, :grams)"  # noqa: S608 - a constant
        conn.execute(text(statement), rows)


def forget_grams(conn: Connection, messages: Iterable[tuple[int, str | Iterable[str]]]) -> None:
    """SQLite: take out the grams of messages about to be deleted (a contentless FTS5 table is told what it held)."""
    rows = list(_rows(messages))
    if rows:
        statement = f"INSERT INTO {GRAMS_TABLE}({GRAMS_TABLE}, rowid, grams) VALUES ('delete', :pk, :grams)"  # noqa: S608
        conn.execute(text(statement), rows)
