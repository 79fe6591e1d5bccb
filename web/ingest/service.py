"""What the ingest route asks of the store and the queue, off the event loop: the key, the append, the job."""

from __future__ import annotations

import logging

from core.accounts import Accounts
from core.ingest import queue_assembly
from core.ingest.intake import waiting
from core.jobs import JobQueue
from core.store import Store
from core.store.api_keys import KeyRecord

log = logging.getLogger(__name__)

BEARER = "bearer "


def ingest_key(store: Store, authorization: str | None) -> KeyRecord | None:
    """The ingest key an ``Authorization: Bearer ...`` header carries, when it is an active one (and its account,
    when it has one, is neither disabled nor gone: the account takes its keys with it)."""
    if not authorization or authorization[: len(BEARER)].lower() != BEARER:
        return None
    key = store.api_keys.verify(authorization[len(BEARER) :].strip(), "ingest")
    if key is None or key.user_name is None:
        return key
    account = Accounts(store).account(key.user_name)
    return key if account is not None and not account.disabled else None


def assemble_later(queue: JobQueue) -> None:
    """Queue the assembly of what was just stored; a failure leaves the batch pending for the next export or
    the next start (``resume_assembly``), never lost."""
    try:
        queue_assembly(queue)
    except Exception:
        log.exception("could not queue the assembly of received spans: they wait for the next export or restart")


def resume_assembly(store: Store, queue: JobQueue) -> None:
    """At start: batches a stopped server stored but did not assemble get their job."""
    if waiting(store, 1):
        assemble_later(queue)
