"""The import's writer thread: batches written one at a time beside the reading, errors reaching the caller as
themselves, nothing written once the caller is interrupted."""

from __future__ import annotations

import threading

import pytest

from core.store.batch_writer import BatchWriter


class Conflict(Exception):
    """What a batch's write may raise (a conflicting version, a refused statement)."""


class BadLine(Exception):
    """What the reader may raise (bad input)."""


def test_batches_are_written_in_order_on_another_thread_and_all_before_the_end() -> None:
    written: list[tuple[int, str]] = []
    with BatchWriter(lambda batch: written.append((batch, threading.current_thread().name))) as writer:
        for batch in range(5):
            writer.put(batch)
    assert [batch for batch, _ in written] == [0, 1, 2, 3, 4]
    assert {name for _, name in written} == {"traceloupe-import-writer"}


def test_a_batch_is_handed_over_only_once_the_one_before_is_written() -> None:
    """Memory holds two batches: the one written and the one read."""
    release = threading.Event()
    started: list[int] = []

    def write(batch: int) -> None:
        started.append(batch)
        assert release.wait(10)

    with BatchWriter(write) as writer:
        writer.put(1)
        handed = threading.Thread(target=writer.put, args=(2,))
        handed.start()
        handed.join(0.2)
        assert handed.is_alive()  # waits while batch 1 is being written
        release.set()
        handed.join(10)
    assert started == [1, 2]


def test_the_writers_error_is_raised_to_the_caller_as_itself_and_stops_the_reading() -> None:
    conflict = Conflict("line 4: differs from the one already stored")

    def write(batch: int) -> None:
        if batch == 2:
            raise conflict

    handed: list[int] = []
    with pytest.raises(Conflict) as caught, BatchWriter(write) as writer:
        for batch in range(10):
            writer.put(batch)
            handed.append(batch)
    assert caught.value is conflict
    assert handed == [0, 1, 2]  # the batch after the failed one is refused, and so is reading on


def test_the_writers_error_at_the_last_batch_is_raised_at_the_end() -> None:
    conflict = Conflict("last")

    def write(batch: int) -> None:
        raise conflict

    with pytest.raises(Conflict) as caught, BatchWriter(write) as writer:
        writer.put(1)
    assert caught.value is conflict


def test_a_bad_line_lets_the_batch_handed_over_be_written_and_its_conflict_wins() -> None:
    """As when each batch was written as soon as it was read: the earlier error in the file is the one raised."""
    read_on = threading.Event()

    def write(batch: int) -> None:
        assert read_on.wait(10)
        raise Conflict(f"batch {batch}")

    with pytest.raises(Conflict, match="batch 1"), BatchWriter(write) as writer:
        writer.put(1)
        read_on.set()
        raise BadLine("line 9")


def test_a_bad_line_is_raised_when_the_batches_before_it_are_good() -> None:
    written: list[int] = []
    with pytest.raises(BadLine), BatchWriter(written.append) as writer:
        writer.put(1)
        raise BadLine("line 9")
    assert written == [1]


def test_ctrl_c_lets_the_batch_under_way_end_and_stops_the_writer_before_the_caller_goes_on() -> None:
    in_batch_1, finish_1 = threading.Event(), threading.Event()
    written: list[int] = []

    def write(batch: int) -> None:
        in_batch_1.set()
        assert finish_1.wait(10)
        written.append(batch)

    writer = BatchWriter(write)
    with pytest.raises(KeyboardInterrupt), writer:
        writer.put(1)
        assert in_batch_1.wait(10)
        threading.Timer(0.2, finish_1.set).start()  # the batch under way ends after the interruption
        raise KeyboardInterrupt
    assert written == [1]  # finished before the caller went on (its transaction rolls back after)
    assert not writer._thread.is_alive()


def test_without_a_thread_each_batch_is_written_as_it_is_handed_over() -> None:
    written: list[tuple[int, str]] = []
    with BatchWriter(lambda batch: written.append((batch, threading.current_thread().name)), threaded=False) as w:
        w.put(1)
        assert written == [(1, threading.current_thread().name)]
