"""The payload and diff pages of a long trace before their digest is stored: a panel that fills, not a long request.

Reading and typing a 100,000-record trace and building its requests takes tens of seconds, more than a
request may run (``web.heavy``). So when such a page's digest has no head stored yet, the page answers at
once with a "being prepared, n %" panel: the steps that make the digest run on the app's backlog
(``web.bodies.preparations``), the panel polls how far they are, and once the head is stored the poll
answers with a refresh that opens the page from the digest. The rest of the digest (later windows and
listings) is made after that by the digest's own completion (``web.backlog``), window by window.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.store import digests as stored
from web import masking, urls
from web.bodies.asked import DiffLinks
from web.bodies.builder import PayloadBuilder, check_provider
from web.bodies.diff_digest import diff_asked
from web.bodies.diffs import diff_digest
from web.bodies.digest import payload_asked
from web.bodies.preparations import Progress, Step
from web.bodies.requests import AskedRequest, digest_key, payload_digest
from web.source import StoreSource


@dataclass(frozen=True, slots=True)
class PreparingPage:
    """The page shown while a digest is prepared: what is made, how far it is, and where the panel polls."""

    title: str
    conversation_id: str
    what: str
    conversation_url: str
    poll_url: str
    progress: Progress


def payload_preparing(source: StoreSource, payloads: PayloadBuilder, asked: AskedRequest) -> Progress | None:
    """How far the payload page's digest is prepared; None when the page can be made now (its digest's head is
    stored, the conversation is small enough to build on the request, or the preparation failed)."""
    preparations = payloads.preparations
    cid = asked.conversation_id
    if asked.options.applied:  # built on the request, within its time budget: such digests are not stored
        return None
    if preparations is None or not preparations.wanted(source.summary(cid).records):
        return None
    check_provider(asked.provider)
    asked_for = payload_asked(payloads, asked.provider, asked.upto, asked.repair, asked.model)
    key = digest_key(source, cid, "payload", asked_for)
    if stored.read_head(source.store.engine, key.key) is not None:
        return None
    steps = [
        Step("reading the conversation", 45, lambda: source.load(cid).messages),
        Step(f"building the {asked.provider} request", 35, lambda: asked.build(source, payloads)),
        Step("laying out the body", 20, lambda: payload_digest(source, payloads, asked)),
    ]
    return preparations.start(("payload", key.key), steps)


def diff_preparing(source: StoreSource, payloads: PayloadBuilder, links: DiffLinks) -> Progress | None:
    """How far the diff page's digest is prepared; None when the page can be made now (as ``payload_preparing``)."""
    preparations = payloads.preparations
    cid = links.conversation_id
    if links.options.applied:
        return None
    if preparations is None or not preparations.wanted(source.summary(cid).records):
        return None
    check_provider(links.left)
    check_provider(links.right)
    key = digest_key(source, cid, "diff", diff_asked(payloads, links.left, links.right, links.upto, links.repair))
    if stored.read_head(source.store.engine, key.key) is not None:
        return None
    steps = [
        Step("reading the conversation", 40, lambda: source.load(cid).messages),
        Step(
            f"building the {links.left} request",
            25,
            lambda: payloads.build(source.load(cid), links.left, upto=links.upto, repair=links.repair),
        ),
        Step(
            f"building the {links.right} request and comparing the two",
            35,
            lambda: diff_digest(source, payloads, links),
        ),
    ]
    return preparations.start(("diff", key.key), steps)


def preparing_page(
    source: StoreSource, conversation_id: str, what: str, poll_url: str, progress: Progress
) -> PreparingPage:
    """The panel page of a digest under way (the conversation's title masked, as every page shows it)."""
    title = masking.mask(source.summary(conversation_id).title) or "(no user text)"
    return PreparingPage(title, conversation_id, what, urls.conversation(conversation_id), poll_url, progress)
