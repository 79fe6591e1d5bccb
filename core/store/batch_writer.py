"""An import's batches written on a thread of their own while the caller reads and prepares the next one.

The database works on one batch (PostgreSQL's server, SQLite's library: both without the GIL while they do)
while this process parses, validates and derives the rows of the next: an import's time comes near the larger of
the two rather than their sum. One batch is written at a time, on the caller's connection and in the caller's
transaction, which stays one and all-or-nothing: the caller commits or rolls back once the writer has stopped.
Memory holds two batches: the one being written and the one being read. Where the database works in this process
(SQLite), holding the GIL but for short steps, a thread would only add switches: ``threaded=False`` writes each batch
as it is handed over, in the caller's thread.

An error of the writer (a conflicting version, a server error) stops it; the caller gets that same exception at
its next hand-over or at the end, and reads no further. An error of the caller (bad input) lets the writer write the
batch handed over, as writing each batch as soon as it was read did: an error of that batch, earlier in the input,
is the one raised. Ctrl-C stops the writer once the batch under way is written. Either way the writer has stopped
before the caller's transaction rolls back: the connection is never used by both at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType
from typing import Generic, TypeVar

Batch = TypeVar("Batch")


class BatchWriter(Generic[Batch]):
    """Writes the batches handed to it with ``write``, one at a time, on a thread of its own (a context manager)."""

    def __init__(
        self, write: Callable[[Batch], None], *, threaded: bool = True, name: str = "traceloupe-import-writer"
    ) -> None:
        self._write = write
        self._threaded = threaded
        self._changed = threading.Condition()
        self._handed: list[Batch] = []
        """The batch handed over and not written yet, if any (held until written: the next one waits for that)."""
        self._closing = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def __enter__(self) -> BatchWriter[Batch]:
        if self._threaded:
            self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if not self._threaded:
            return
        if error is not None and not isinstance(error, Exception):
            self._stop()  # Ctrl-C: the batch handed over, if any, is left unwritten
            return
        try:
            self._wait_for_idle()  # the writer's error, if it has one, in place of the caller's
        finally:
            self._stop()

    def put(self, batch: Batch) -> None:
        """Hand a batch over once the previous one is written; raises the writer's error if it has stopped on one."""
        if not self._threaded:
            self._write(batch)
            return
        self._wait_for_idle()
        with self._changed:
            self._handed.append(batch)
            self._changed.notify_all()

    def _wait_for_idle(self) -> None:
        with self._changed:
            while self._handed and self._error is None:
                self._changed.wait()
            if self._error is not None:
                raise self._error

    def _stop(self) -> None:
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._handed and not self._closing:
                    self._changed.wait()
                if self._closing:  # a batch still held was handed by a caller that has failed since
                    return
                batch = self._handed[0]
            try:
                self._write(batch)
            except BaseException as error:  # handed to the caller, which raises it
                with self._changed:
                    self._error = error
                    self._changed.notify_all()
                return
            del batch
            with self._changed:
                self._handed.clear()
                self._changed.notify_all()
