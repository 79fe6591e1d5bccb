"""Per-provider concurrency: at most N calls to one provider in flight, and 429s waited out.

On SQLite the queue's workers are threads of one process, so a semaphore per provider holds
the limit. On PostgreSQL workers are processes on any machine: a call takes one of the
provider's N slots as a session advisory lock (two-key form, in a key space of Traceloupe's
own) on a connection it holds for the call. A killed worker's connection closes and the
server frees its slot, so a crash never leaks one.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

from core.replay.endpoints import Endpoint
from core.replay.send import Exchange, Sender, send
from core.store.advisory_locks import SessionLocks

_LOCK_SPACE = 0x746C_6A6F  # "tljo": the first key of every slot lock; Procrastinate's locks use the one-key form
SLOT_POLL_SECONDS = 0.05
MAX_RATE_LIMIT_RETRIES = 20
"""A provider answering ``retry-after: 0`` forever must not hold a worker forever."""


class Limiter(Protocol):
    """Hands out a provider's call slots."""

    def slot(self, provider: str) -> AbstractContextManager[None]:
        """Hold one of ``provider``'s slots for the duration of the block (waits for one to be free)."""
        ...


class LocalLimiter:
    """Slots as semaphores of this process (the SQLite queue's threads)."""

    def __init__(self, limits: Mapping[str, int]) -> None:
        self._semaphores = {name: threading.BoundedSemaphore(n) for name, n in limits.items()}

    def slot(self, provider: str) -> AbstractContextManager[None]:
        semaphore = self._semaphores.get(provider)
        return semaphore if semaphore is not None else nullcontext()  # type: ignore[return-value]


def slot_key(provider: str, index: int) -> int:
    """The second advisory-lock key of ``provider``'s slot ``index``: a signed 32-bit integer."""
    value = zlib.crc32(f"{provider}\0{index}".encode())
    return value - (1 << 32) if value >= 1 << 31 else value


class AdvisoryLimiter:
    """Slots as PostgreSQL session advisory locks, shared by every worker of the database."""

    def __init__(self, locks: SessionLocks, limits: Mapping[str, int], *, poll: float = SLOT_POLL_SECONDS) -> None:
        self._locks = locks
        self._limits = dict(limits)
        self._poll = poll

    def slot(self, provider: str) -> AbstractContextManager[None]:
        limit = self._limits.get(provider)
        return nullcontext() if limit is None else self._hold(provider, limit)

    @contextmanager
    def _hold(self, provider: str, limit: int) -> Iterator[None]:
        keys = [slot_key(provider, index) for index in range(limit)]
        with self._locks.hold_first_free(_LOCK_SPACE, keys, poll=self._poll):
            yield


def retry_delay(retry_after: str | None, *, now: Callable[[], float] = time.time) -> float | None:
    """Seconds a ``retry-after`` header asks for (a number or an HTTP date); None when there is none to read."""
    if retry_after is None:
        return None
    value = retry_after.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - now()
        except (TypeError, ValueError):
            return None
    return max(0.0, seconds) if seconds == seconds else None  # NaN reads as nothing


def limited_sender(
    limiter: Limiter,
    provider: str,
    *,
    max_wait: float,
    sleep: Callable[[float], None] = time.sleep,
    base: Sender = send,
) -> Sender:
    """A ``send`` that holds a slot of ``provider`` for each call and retries a 429 after its retry-after.

    The waits of one job add up to at most ``max_wait`` seconds; past it (or with no retry-after
    to read) the 429 is returned and recorded as the run's outcome. The slot is released while
    waiting, so the provider's other callers are not held up by this one's back-off.
    """
    waited = 0.0

    def sender(endpoint: Endpoint, model: str, body: dict[str, Any], *, timeout: float = 60.0) -> Exchange:
        nonlocal waited
        for _ in range(MAX_RATE_LIMIT_RETRIES):
            with limiter.slot(provider):
                exchange = base(endpoint, model, body, timeout=timeout)
            delay = retry_delay(exchange.retry_after) if exchange.status == "rate_limited" else None
            if delay is None or waited + delay > max_wait:
                return exchange
            sleep(delay)
            waited += delay
        return exchange

    return sender
