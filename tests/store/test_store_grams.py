"""The grams a search of one or two characters is answered from: exactly the text's characters and adjacent pairs."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.store import grams
from core.store.grams import grams_of


def _by_definition(text: str) -> set[str]:
    return set(text) | {text[i : i + 2] for i in range(len(text) - 1)}


# Spaces, alone and in runs, at either end or not, with ASCII, accented, CJK and astral characters between them.
PIECES = [" ", "  ", "a", "b", "ab", "é", "世", "😀", "\u00a0", "\t"]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


# Each text made both ways: as a short text is, and as a long one is (word by word).
WAYS = pytest.mark.parametrize("made", [grams_of, grams._grams_by_word], ids=["short", "long"])


@WAYS
@given(text=TEXTS)
def test_the_grams_of_a_text_are_its_characters_and_adjacent_pairs(made: Callable[[str], set[str]], text: str) -> None:
    assert made(text) == _by_definition(text)


@WAYS
def test_the_pairs_across_spaces_are_found_at_either_end_and_in_runs(made: Callable[[str], set[str]]) -> None:
    for text in ["", " ", "  ", "a", " a", "a ", "a  b", "  a  ", "ab ab", "x y  z   ", "b a b"]:
        assert made(text) == _by_definition(text), repr(text)


def test_a_long_text_is_made_word_by_word_with_the_same_grams() -> None:
    words = ["the", "weather", "世界", "😀x", "", "é"] * 4_000
    text = " ".join(words) + "  tail"
    assert len(text) >= grams.LONG_TEXT
    assert grams_of(text) == _by_definition(text)


def test_a_pair_across_the_blocks_of_a_long_text_is_found() -> None:
    long = grams.LONG_TEXT
    text = "a" * (long - 1) + "xy" + "a" * long + "zw"  # "xy" straddles the first blocks' boundary, "zw" ends the text
    assert {"xy", "ya", "az", "zw"} <= grams_of(text)
    assert grams_of(text) == _by_definition(text)
