"""The ``digest`` task: after an import, a large conversation's payload and diff digests are made in the background.

An import queues one job per conversation of at least ``DIGEST_MIN_RECORDS`` records
(:func:`queue_digests`); the job makes the digest each provider's payload page (its default model,
the whole conversation, no repair) and the dashboard's default diff read first, so the first reader
of those pages gets them from the store. A digest already stored is read, not made again, so a job
that runs twice (its worker died) costs a few reads. The job's arguments are the conversation id and
the dashboard's attachments root (part of the digests' key): nothing secret.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path

from core.jobs.queue import JSON, JobQueue
from core.jobs.registry import JobContext, task
from core.store import Store
from web.bodies.asked import DiffLinks
from web.bodies.builder import PayloadBuilder, providers
from web.bodies.diffs import DEFAULT_PAIR, diff_digest
from web.bodies.requests import AskedRequest, payload_digest
from web.source import StoreSource

log = logging.getLogger(__name__)

DIGEST_TASK = "digest"
DIGEST_MIN_RECORDS = 2_000
"""Conversations smaller than this build their pages fast enough on the first request."""

DIGEST_PROVIDER = "digest"
"""The jobs' provider slot: they call no provider."""


def fill_digests(store: Store, conversation_id: str, attachments_root: Path | None = None) -> int:
    """Make (or find) the payload digest of every provider and the default diff's; how many were made or found."""
    source = StoreSource(store)
    payloads = PayloadBuilder(attachments_root)
    done = 0
    try:  # first: the timeline is the page a reader opens first
        done += source.store_order(conversation_id)
    except Exception:
        log.exception("could not store the timeline order of %s", conversation_id)
    for provider in providers():
        try:
            payload_digest(
                source, payloads, AskedRequest(conversation_id, provider, None, False, None), every_window=True
            )
            done += 1
        except Exception:  # one dialect failing leaves the others' digests worth making
            log.exception("could not make the %s payload digest of %s", provider, conversation_id)
    try:
        diff_digest(source, payloads, DiffLinks(conversation_id, *DEFAULT_PAIR, None, False), every_window=True)
        done += 1
    except Exception:
        log.exception("could not make the diff digest of %s", conversation_id)
    return done


@task(DIGEST_TASK)
def digest_task(ctx: JobContext, args: Mapping[str, JSON]) -> None:
    """Make the digests of one conversation (see the module)."""
    root = args.get("attachments_root")
    fill_digests(ctx.store, str(args["conversation_id"]), Path(root) if isinstance(root, str) else None)


def queue_digests(
    queue: JobQueue, source: StoreSource, conversation_ids: Iterable[str], attachments_root: Path | None
) -> list[str]:
    """Queue the digest job of each of these conversations large enough to need one; the ids queued."""
    queued = []
    for conversation_id in conversation_ids:
        if source.summary(conversation_id).records < DIGEST_MIN_RECORDS:
            continue
        args: dict[str, JSON] = {
            "conversation_id": conversation_id,
            "attachments_root": str(attachments_root) if attachments_root is not None else None,
        }
        queue.enqueue(DIGEST_TASK, args, provider=DIGEST_PROVIDER, lock=f"{DIGEST_TASK}:{conversation_id}")
        queued.append(conversation_id)
    return queued
