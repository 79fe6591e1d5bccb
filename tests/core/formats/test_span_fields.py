"""What the span conventions share once a span is read: the pool of texts a reader shares."""

from __future__ import annotations

from core.formats.span_fields import TextPool


def test_a_text_met_again_is_the_same_object() -> None:
    pool = TextPool()
    first = pool("".join(["You book ", "trips."]))
    again = pool("".join(["You book ", "trips."]))
    assert again is first


def test_a_pool_holds_no_more_than_its_limit_however_many_texts_it_meets() -> None:
    pool = TextPool(limit=10_000)
    for n in range(5_000):
        pool(f"question #{n}: " + "x" * 50)
        assert sum(len(text) for text in pool.texts) <= 10_000
    recent = pool(f"question #{4_999}: " + "x" * 50)
    assert pool(f"question #{4_999}: " + "x" * 50) is recent
