"""Built requests are kept by what they hold: many small conversations read in between do not push out a long trace's.

Under load (bench/load.py) a long trace's payload or diff was rebuilt on nearly every request: the caches
counted entries, so the small conversations opened in between pushed the long trace's build, diff and
parsed messages out, and each rebuild cost seconds of CPU and held a heavy-work slot meanwhile.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core import Message
from tests.web.web_corpus import BASE_URL, long_trace, temp_store
from web.app import create_app
from web.bodies import diffs as diff_service
from web.bodies.builder import PayloadBuilder
from web.settings import Settings
from web.source import StoreSource

SMALL = 30
"""Small conversations read between two visits of the long trace: more than any count bound held."""

LONG_PAGES = ("/conversations/c-long/payload/anthropic", "/conversations/c-long/diff?left=openai&right=anthropic")


class Work(Counter[str]):
    """How often each kind of costly work ran for each conversation (``kind:conversation``)."""


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Work:
    counts = Work()
    build, compare, opened = PayloadBuilder._build, diff_service.compare, StoreSource._from_outlines

    def counting_build(self: PayloadBuilder, messages: Sequence[Message], *args: Any) -> Any:
        counts[f"build:{messages[0].conversation_id}"] += 1
        return build(self, messages, *args)

    def counting_compare(left: Any, right: Any, *args: Any) -> Any:
        counts["compare"] += 1
        return compare(left, right, *args)

    def counting_open(self: StoreSource, conversation_id: str) -> Any:
        counts[f"open:{conversation_id}"] += 1
        return opened(self, conversation_id)

    monkeypatch.setattr(PayloadBuilder, "_build", counting_build)
    monkeypatch.setattr(diff_service, "compare", counting_compare)
    monkeypatch.setattr(StoreSource, "_from_outlines", counting_open)
    return counts


@pytest.fixture
def client() -> Iterator[TestClient[Litestar]]:
    smalls = [m for i in range(SMALL) for m in long_trace(2, conversation_id=f"c-small-{i}")]
    with TestClient(create_app(Settings(), temp_store([*long_trace(2000), *smalls])), base_url=BASE_URL) as c:
        yield c


def test_a_long_traces_payload_and_diff_are_not_rebuilt_after_many_small_conversations(
    client: TestClient[Litestar], work: Work
) -> None:
    for url in LONG_PAGES:
        assert client.get(url).status_code == 200
    first = dict(work)
    assert (first["build:c-long"], first["compare"], first["open:c-long"]) == (2, 1, 1)

    for i in range(SMALL):
        for url in (f"/conversations/c-small-{i}/payload/anthropic", f"/conversations/c-small-{i}/diff"):
            assert client.get(url).status_code == 200
    for url in LONG_PAGES:
        assert client.get(url).status_code == 200

    assert work["build:c-long"] == 2  # both providers' requests built once
    assert work["compare"] == 1 + SMALL  # the long trace's diff computed once
    assert work["open:c-long"] == 1  # its records read and ordered once


def test_builds_are_bounded_by_the_records_they_hold() -> None:
    store = temp_store([m for n in range(3) for m in long_trace(1000, conversation_id=f"c-long-{n}")])
    source = StoreSource(store)
    payloads = PayloadBuilder(None, max_records=2500)
    built = [payloads.build(source.load(f"c-long-{n}"), "openai") for n in range(3)]
    again = [payloads.build(source.load(f"c-long-{n}"), "openai") for n in (2, 1, 0)]
    # The two newest stay (the same objects); the oldest was dropped and is built anew.
    assert [a is b for a, b in zip(again, reversed(built), strict=True)] == [True, True, False]
