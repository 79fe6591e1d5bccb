"""Heavy requests (payload, phases, diff, compare, import) under a time budget and a concurrency limit.

A build that takes long is work another site can make a visitor's browser ask for,
so every heavy handler runs its work through ``HeavyWork.run``:

- at most ``concurrency`` builds run at once; a slot stays taken until its thread has
  really ended, so abandoned work still counts. A request past the limit waits up to
  ``queue_seconds`` for a slot (a burst of readers opening payloads is not an outage),
  then gets 503;
- the work runs in a thread of its own; when the budget is spent or the client
  disconnects, the thread is stopped by raising ``WorkStopped`` inside it (CPython's
  asynchronous exception, delivered between bytecodes: pure-Python builds stop at
  once, a C call finishes first). Work that writes (an import) asks for
  ``interrupt=False`` and checks ``stopped`` itself at points where stopping is safe;
- past the budget the client gets ``BudgetExceeded`` (a 503 page that names the CLI
  command doing the same work without a limit).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio
from litestar.types import Receive

T = TypeVar("T")

QUEUE_POLL_SECONDS = 0.02

_set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
_set_async_exc.argtypes = [ctypes.c_ulong, ctypes.py_object]
_set_async_exc.restype = ctypes.c_int


class WorkStopped(BaseException):
    """Raised inside a heavy build's thread to stop it; a BaseException so ``except Exception`` lets it pass."""


class HeavyBusy(Exception):
    """Every slot for heavy work is taken: the client may retry shortly (503 with Retry-After)."""

    def __init__(self, concurrency: int) -> None:
        super().__init__(f"The dashboard is already building {concurrency} large requests; try again in a moment.")


class BudgetExceeded(Exception):
    """The work did not finish within its time budget and was stopped (503 naming the CLI command)."""

    def __init__(self, budget: float, what: str, command: str) -> None:
        super().__init__(
            f"Stopped after {budget:g} seconds, the limit for one request here: {what} did not finish. "
            "The command line does it without a limit."
        )
        self.command = command


class ClientGone(Exception):
    """The client disconnected while its work ran; the work was stopped and nobody is left to answer."""


@dataclass(frozen=True, slots=True)
class Limits:
    """How long one heavy request may run and how many may run at once."""

    budget_seconds: float
    concurrency: int
    queue_seconds: float = 0.0
    """How long a request waits for a free slot before it is refused."""


class Job(Generic[T]):
    """One piece of heavy work on its own thread; ``stop()`` ends it from outside."""

    def __init__(self, fn: Callable[[threading.Event], T], *, interrupt: bool, on_end: Callable[[], None]) -> None:
        self._fn = fn
        self._interrupt = interrupt
        self._on_end = on_end
        self._lock = threading.Lock()
        self._inside = False
        self._thread_id: int | None = None
        self.stopped = threading.Event()
        self.done = threading.Event()
        self.result: T | None = None
        self.error: BaseException | None = None

    def start(self) -> None:
        threading.Thread(target=self._run, name="traceloupe-heavy", daemon=True).start()

    def stop(self) -> None:
        """Ask the work to stop; interrupt its thread when it runs interruptible work."""
        self.stopped.set()
        with self._lock:
            if self._interrupt and self._inside and self._thread_id is not None:
                _set_async_exc(self._thread_id, WorkStopped)

    def _run(self) -> None:
        try:
            self._call()
        finally:
            self.done.set()
            self._on_end()

    def _call(self) -> None:
        with self._lock:
            self._thread_id = threading.get_ident()
            self._inside = not self.stopped.is_set()
        try:
            if self._inside:
                self.result = self._fn(self.stopped)
        except BaseException as exc:
            self.error = exc
        finally:
            with self._lock:
                self._inside = False
                # An interrupt raised but not yet delivered must not surface outside the work.
                _set_async_exc(threading.get_ident(), ctypes.py_object())


class HeavyWork:
    """The budget and the slots shared by every heavy route of one app."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._slots = threading.BoundedSemaphore(limits.concurrency)

    async def run(
        self,
        receive: Receive,
        fn: Callable[[threading.Event], T],
        *,
        what: str,
        command: str,
        interrupt: bool = True,
        budget: float | None = None,
    ) -> T:
        """``fn(stopped)`` on a thread of its own, within the budget, stopped if the client leaves.

        ``stopped`` is set when the work should end; work run with ``interrupt=False`` must check it.
        """
        budget = self.limits.budget_seconds if budget is None else budget
        await self._take_slot()
        loop = asyncio.get_running_loop()
        finished = asyncio.Event()

        def ended() -> None:
            self._slots.release()
            with contextlib.suppress(RuntimeError):  # the loop is gone (server shut down): nobody waits
                loop.call_soon_threadsafe(finished.set)

        job = Job(fn, interrupt=interrupt, on_end=ended)
        job.start()
        gone = False
        try:
            with anyio.move_on_after(budget):
                async with anyio.create_task_group() as tasks:

                    async def watch() -> None:
                        nonlocal gone
                        await _wait_for_disconnect(receive)
                        gone = True
                        tasks.cancel_scope.cancel()

                    tasks.start_soon(watch)
                    await finished.wait()
                    tasks.cancel_scope.cancel()
        finally:
            if not job.done.is_set():
                job.stop()
        if gone:
            raise ClientGone
        if not job.done.is_set() or isinstance(job.error, WorkStopped):
            raise BudgetExceeded(budget, what, command)
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[return-value]

    async def _take_slot(self) -> None:
        """A slot, waiting up to ``queue_seconds`` for one; HeavyBusy when none frees in time.

        Polled, not awaited on a thread: a waiting request must not hold one of the threads
        that serve the light pages.
        """
        deadline = time.monotonic() + self.limits.queue_seconds
        while not self._slots.acquire(blocking=False):
            if time.monotonic() >= deadline:
                raise HeavyBusy(self.limits.concurrency)
            await asyncio.sleep(QUEUE_POLL_SECONDS)


async def _wait_for_disconnect(receive: Receive) -> None:
    while True:
        message: Any = await receive()
        if message["type"] == "http.disconnect":
            return


def shell_command(*argv: str | None) -> str:
    """One shell command line, every argument quoted (ids come from traces); None arguments are left out."""
    return " ".join(shlex.quote(a) for a in argv if a is not None)


def export_then(conversation_id: str, *command: str | None) -> str:
    """``traceloupe export`` of one conversation piped into a file command reading standard input."""
    export = shell_command("traceloupe", "export", "--conversation", conversation_id, "--no-runs")
    return f"{export} | {shell_command(*command)}"


def release_memory() -> None:
    """Give freed heap back to the operating system after a large request (glibc only; a no-op elsewhere)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
