"""One conversation filter: the list's query, a suite's saved filter and the store's query name the same thing."""

from __future__ import annotations

import pytest

from core.store import ConversationQuery
from core.store.filters import ConversationFilter, describe

FILTERS = [
    ConversationFilter(),
    ConversationFilter(search="weather"),
    ConversationFilter(kind="tool", damaged=True),
    ConversationFilter(search="x", kind="user:image", damaged=True, with_runs=True),
]


@pytest.mark.parametrize("chosen", FILTERS)
def test_a_saved_filter_reads_back_as_the_filter_it_was(chosen: ConversationFilter) -> None:
    assert ConversationFilter.from_json(chosen.to_json()) == chosen


@pytest.mark.parametrize("chosen", FILTERS)
def test_the_stores_query_of_a_filter_gives_that_filter_back(chosen: ConversationFilter) -> None:
    assert ConversationFilter.of_query(chosen.query(sort="oldest", limit=7)) == chosen


def test_an_unset_filter_asks_the_store_for_nothing_rather_than_for_without() -> None:
    query = ConversationFilter(search="  ").query()
    assert (query.search, query.has_damaged, query.has_runs, query.kind) == (None, None, None, None)
    assert ConversationFilter().to_json() == {}


def test_a_suites_filter_is_put_into_words_one_way() -> None:
    assert describe({"search": "weather", "kind": "tool"}) == "search='weather' kind='tool'"
    assert describe({"conversations": ["a", "b", "c"]}) == "3 conversation(s) chosen by id: a, b, c"
    assert describe({"conversations": list("abcdefg")}) == "7 conversation(s) chosen by id: a, b, c, d, e ..."
    assert describe({}) == "(no filter)"
    assert describe(ConversationFilter.of_query(ConversationQuery(search=" w ", has_damaged=True)).to_json()) == (
        "search='w' damaged=True"
    )
