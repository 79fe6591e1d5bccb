"""The assembly job lets a burst of exports finish arriving before its round: it waits while batches keep coming,
up to a bound after the oldest waiting one, and not at all when nothing waits or the batches have gone quiet."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core.ingest import assembly, store_batch
from core.store import Store
from core.store.engine import read_transaction
from tests.ingest.genai_spans import otlp_body, record, tracer_provider


def _body() -> bytes:
    memory = InMemorySpanExporter()
    provider = tracer_provider(memory)
    record(provider, 1)
    provider.shutdown()
    return otlp_body(list(memory.get_finished_spans()))


def _received(store: Store) -> int:
    with read_transaction(store.engine) as conn:
        found = assembly.tables.pending_received(conn)
    assert found is not None
    return found[1]


class Clock:
    """``now_ms`` and ``time.sleep`` of the assembly module: sleeping moves the clock, and is recorded.

    ``time.sleep`` is the process's: another thread's sleep (a pool's, an earlier test's server) passes through
    unrecorded, or it would be counted as the assembly's."""

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, start: int, after_sleep: Callable[[], None] | None = None
    ) -> None:
        self.now, self.slept = start, []
        self._thread = threading.current_thread()
        self._real_sleep = time.sleep
        self._after_sleep = after_sleep
        monkeypatch.setattr(assembly, "now_ms", lambda: self.now)
        monkeypatch.setattr(assembly.time, "sleep", self.sleep)

    def sleep(self, seconds: float) -> None:
        if threading.current_thread() is not self._thread:
            self._real_sleep(seconds)
            return
        self.slept.append(round(seconds * 1000))
        self.now += round(seconds * 1000)
        if self._after_sleep is not None:
            self._after_sleep()


def test_nothing_waiting_means_no_wait(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock(monkeypatch, 10_000)
    assembly.settle(store)
    assert clock.slept == []


def test_a_batch_just_received_is_given_the_quiet_time_and_a_quiet_one_none(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_batch(store, _body(), "application/x-protobuf", key_pk=None)
    clock = Clock(monkeypatch, _received(store) + 100)
    assembly.settle(store, quiet_ms=300, max_wait_ms=1_000)
    assert clock.slept == [200]
    assembly.settle(store, quiet_ms=300, max_wait_ms=1_000)
    assert clock.slept == [200]


def test_batches_that_keep_arriving_are_waited_for_no_longer_than_the_bound_after_the_oldest(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_batch(store, _body(), "application/x-protobuf", key_pk=None)
    oldest = _received(store)

    def another_batch_each_sleep() -> None:
        monkeypatch.setattr(assembly.tables, "pending_received", lambda conn: (oldest, clock.now))

    clock = Clock(monkeypatch, oldest, after_sleep=another_batch_each_sleep)
    assembly.settle(store, quiet_ms=300, max_wait_ms=1_000)
    assert sum(clock.slept) == 1_000
