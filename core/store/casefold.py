"""The one case fold of search, on both backends: Unicode case folding, character by character.

``str.casefold`` folds "ς" (final sigma) and "Σ" both to "σ", "ſ" to "s" and "µ" to "μ", as SQLite's
FTS5 does; ``str.lower`` leaves "ς" as it is, so "σοφος" would not find "ΣΟΦΟΣ". A character whose fold
is several characters ("ß" to "ss") is lowercased instead, so the fold keeps every character's place
(PostgreSQL's chunks read a snippet's position from it).
"""

from __future__ import annotations

from functools import cache


@cache
def fold_table() -> dict[int, str]:
    """Every character whose one-character fold is another character, mapped to that fold."""
    table = {}
    for point in range(0x110000):
        char = chr(point)
        folded = char.casefold()
        if len(folded) != 1:
            folded = char.lower()
        if len(folded) == 1 and folded != char:
            table[point] = folded
    return table


def fold(text: str) -> str:
    """``text`` case-folded character by character: the same length, every character in its place."""
    return text.lower() if text.isascii() else text.translate(fold_table())


@cache
def _cased() -> frozenset[str]:
    """Every character the fold changes or that another character folds to."""
    table = fold_table()
    return frozenset(chr(point) for point in table) | frozenset(table.values())


def caseless(text: str) -> bool:
    """No character of ``text`` has another case (CJK, digits...): a plain comparison finds it as the fold would."""
    return _cased().isdisjoint(text)
