"""PostgreSQL: a long needle found through a few grams of five characters, sampled at every fourth place of a text.

A needle of eight or more characters made only of common trigrams (an id such as "zx0500001": "zx0", "000", "500")
made the trigram GIN indexes walk long posting lists, whose length grows with the store. Besides its characters and
pairs (``core.store.grams``, which SQLite's index keeps alone), each folded text's grams on PostgreSQL hold its 5-grams
that start at places 0, 4, 8, ... of the text. A needle of ``n`` characters at place ``q`` of a text meets that
sampling at its own places ``p, p + 4, ...`` with ``p = -q mod 4``: the text's grams then hold every 5-gram of the
needle starting there. The search asks, for each of the four phases ``p``, whether a row's grams contain that phase's
5-grams (``n >= 8`` leaves each phase one at least), and tests the rows found with ``LIKE``: four small GIN scans,
each the intersection of a few rare keys. A search chunk starts at a multiple of ``STRIDE`` (a multiple of 4) in its
text, so sampling the chunk from its start samples the text; a conversation's id and title are each sampled from
their own start. A 5-gram never equals a character or a pair, so the short needles' answers are unchanged.
"""

from __future__ import annotations

from core.store.grams import GRAMS_FUNCTION, grams_of

STEP = 4
"""Places between two sampled 5-grams of a text; ``core.store.pg_search.STRIDE`` is a multiple of it."""
WIDTH = 5
"""Characters in a sampled gram: longer than a trigram, so rarer, and never a character or a pair."""
MIN_NEEDLE = STEP + WIDTH - 1
"""The shortest needle every phase of which holds a whole sampled gram; shorter ones go to the trigram indexes."""
SAMPLED_FUNCTION = "traceloupe_sampled_grams"
"""The SQL function giving a folded text's sampled 5-grams, as ``sampled_grams`` does (revision 0035)."""

# Linear in the text's length: ``substr`` walks a multibyte text from its start, so the text is split into its
# characters once and the five shifted slices of that array are unnested side by side, every ``STEP``-th row kept.
SAMPLED_FUNCTION_SQL = f"""
CREATE OR REPLACE FUNCTION {SAMPLED_FUNCTION}(folded text) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT ARRAY(
    SELECT c1 || c2 || c3 || c4 || c5
    FROM unnest(c[1:n - 4], c[2:n - 3], c[3:n - 2], c[4:n - 1], c[5:n]) WITH ORDINALITY AS five(c1, c2, c3, c4, c5, at)
    WHERE at % {STEP} = 1
  )
  FROM (SELECT c, cardinality(c) AS n FROM (SELECT string_to_array(folded, NULL) AS c) AS split) AS chars
$$
"""  # noqa: S608 - constants
# ``GRAMS_FUNCTION`` on PostgreSQL: the characters and pairs as revision 0020's function gave them (pairs from the
# characters zipped with themselves shifted by one, for the reason above), then the sampled 5-grams.
GRAMS_FUNCTION_SQL = f"""
CREATE OR REPLACE FUNCTION {GRAMS_FUNCTION}(folded text) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT c || ARRAY(SELECT a || b FROM unnest(c[1:cardinality(c) - 1], c[2:cardinality(c)]) AS pair(a, b))
    || {SAMPLED_FUNCTION}(folded)
  FROM (SELECT string_to_array(folded, NULL) AS c) AS chars
$$
"""  # noqa: S608 - constants


def sampled_grams(folded: str) -> set[str]:
    """The 5-grams of a folded text that start at places 0, 4, 8, ..."""
    return {folded[at : at + WIDTH] for at in range(0, len(folded) - WIDTH + 1, STEP)}


def search_grams(folded: str) -> set[str]:
    """Every gram PostgreSQL stores for a folded text: its characters, its pairs and its sampled 5-grams."""
    found = grams_of(folded)
    found.update([folded[at : at + WIDTH] for at in range(0, len(folded) - WIDTH + 1, STEP)])  # a list: no generator
    return found


def phase_grams(folded_needle: str) -> list[list[str]]:
    """For each of the ``STEP`` places a sampling may meet a needle of at least ``MIN_NEEDLE`` characters at, the
    needle's 5-grams starting there: a text holding the needle has all of one phase's among its ``search_grams``."""
    if len(folded_needle) < MIN_NEEDLE:
        raise ValueError(f"a needle of {len(folded_needle)} characters has a phase without a whole sampled gram")
    last = len(folded_needle) - WIDTH
    return [sorted({folded_needle[at : at + WIDTH] for at in range(phase, last + 1, STEP)}) for phase in range(STEP)]
