"""Reading retry-after and provider limits; the limited sender's 429 budget and its slot per call."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from core.errors import MisuseError
from core.jobs import parse_limits
from core.jobs.limits import limited_sender, retry_delay
from core.providers import get_dialect
from core.replay.endpoints import Endpoint
from core.replay.send import Exchange


@pytest.mark.parametrize(("header", "seconds"), [("2", 2.0), (" 0.5 ", 0.5), ("-3", 0.0), ("soon", None), (None, None)])
def test_retry_after_reads_seconds(header: str | None, seconds: float | None) -> None:
    assert retry_delay(header) == seconds


def test_retry_after_as_a_date_counts_from_now() -> None:
    assert retry_delay("Thu, 01 Jan 1970 00:01:40 GMT", now=lambda: 90.0) == pytest.approx(10.0)


def test_provider_limits_read_name_equals_count() -> None:
    assert parse_limits("openai=4, anthropic=2,") == {"openai": 4, "anthropic": 2}
    for bad in ("openai", "openai=0", "=3", "openai=x"):
        with pytest.raises(MisuseError):
            parse_limits(bad)


class _Slots:
    def __init__(self) -> None:
        self.held = 0
        self.taken = 0

    @contextmanager
    def _hold(self) -> Iterator[None]:
        self.held += 1
        self.taken += 1
        try:
            yield
        finally:
            self.held -= 1

    def slot(self, provider: str) -> Any:
        assert provider == "openai"
        return self._hold()


def test_the_sender_holds_a_slot_per_call_and_waits_out_429s_up_to_the_budget() -> None:
    slots = _Slots()
    answers = [Exchange("rate_limited", 1, 429, retry_after="2"), Exchange("rate_limited", 1, 429, retry_after="3")]
    answers.append(Exchange("ok", 1, 200))
    waits: list[float] = []

    def base(endpoint: Endpoint, model: str, body: dict[str, Any], *, timeout: float = 60.0) -> Exchange:
        assert slots.held == 1  # every call inside its slot; waits outside it
        return answers.pop(0)

    def sleep(seconds: float) -> None:
        assert slots.held == 0
        waits.append(seconds)

    endpoint = Endpoint(get_dialect("openai"), None, "sk-0123456789")
    sender = limited_sender(slots, "openai", max_wait=5.0, sleep=sleep, base=base)
    assert sender(endpoint, "m", {}).status == "ok"
    assert waits == [2.0, 3.0] and slots.taken == 3
    answers[:] = [Exchange("rate_limited", 1, 429, retry_after="1")]
    assert sender(endpoint, "m", {}).status == "rate_limited"  # the job's 5 s are spent: the 429 stands
    assert waits == [2.0, 3.0]
