"""A received export stored before it is answered: read, checked, appended with its spans' ids, or refused.

The queue's bound is the number of batches waiting for assembly: past it the request is refused (the
exporter retries after the ``Retry-After`` it is given) rather than stored, so what is accepted is always
stored and what is refused is never half-stored.
"""

from __future__ import annotations

from core.ingest.receive import MediaType, ReceivedBatch, received
from core.messages.base import now_ms
from core.store import Store
from core.store import ingest as tables
from core.store.engine import read_transaction, write_transaction
from core.store.errors import DATABASE_LOST

DEFAULT_MAX_PENDING = 10_000
"""Batches waiting for assembly at most (an exporter sends 512 spans a batch by default: about 5 million spans)."""


class QueueFull(Exception):
    """As many batches as the bound allows wait for assembly: the request is refused, nothing is stored."""


class StoreBusy(Exception):
    """The store could not take the batch now (locked by a long write, or unreachable): nothing is stored."""


def store_batch(
    store: Store, body: bytes, media: MediaType, *, key_pk: int | None, max_pending: int = DEFAULT_MAX_PENDING
) -> ReceivedBatch:
    """Read the (decompressed) body and append it with its kept spans' ids; InputError when it is not OTLP,
    QueueFull past ``max_pending`` waiting batches, StoreBusy when the store cannot take it now."""
    batch = received(body, media)
    try:
        with write_transaction(store.engine) as conn:
            if tables.pending_count(conn, max_pending) >= max_pending:
                raise QueueFull
            tables.append_batch(conn, body=body, content_type=media, spans=batch.kept, key_pk=key_pk, now=now_ms())
    except DATABASE_LOST as error:
        raise StoreBusy(" ".join(str(error).split())[:200]) from error
    return batch


def waiting(store: Store, cap: int) -> int:
    """How many received batches wait for assembly, counted up to ``cap``."""
    with read_transaction(store.engine) as conn:
        return tables.pending_count(conn, cap)
