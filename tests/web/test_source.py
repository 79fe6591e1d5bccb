"""The conversation cache weighs what an opened conversation holds: a long trace's timeline stays while others open."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.web_corpus import long_trace, temp_store
from web.source import ConversationCache, StoreSource

LONG = 1_000
BOUND = 400
"""The cache's records bound: under the long trace's records, over a share of them and the small ones'."""


@pytest.fixture
def source() -> StoreSource:
    messages = [*long_trace(LONG, conversation_id="c-long")]
    messages += [m for i in range(5) for m in long_trace(20, conversation_id=f"c-small-{i}")]
    return StoreSource(temp_store(messages), ConversationCache(max_records=BOUND))


def _reads(source: StoreSource, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    opened = StoreSource._from_outlines

    def counting(self: StoreSource, conversation_id: str) -> Any:
        reads.append(conversation_id)
        return opened(self, conversation_id)

    monkeypatch.setattr(StoreSource, "_from_outlines", counting)
    return reads


def test_a_long_trace_s_timeline_stays_cached_while_other_conversations_open(
    source: StoreSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = _reads(source, monkeypatch)
    source.load("c-long")
    for i in range(5):
        source.load(f"c-small-{i}")
    source.load("c-long")
    assert reads.count("c-long") == 1


def test_a_typed_long_trace_weighs_all_it_holds_and_leaves_for_the_next_conversation(
    source: StoreSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = _reads(source, monkeypatch)
    assert len(source.load("c-long").messages) == 1  # typed: every record's message held
    source.load("c-small-0")
    source.load("c-long")
    assert reads.count("c-long") == 2
