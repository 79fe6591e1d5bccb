"""The payload page's digest: a build's facts, its warnings, its window plan and every window, kept in the store.

A first response needs whole-body facts (the warnings, the preflight verdict, how many windows, which
window holds each card), which cost a build of the whole request. The digest keeps them, made once:
by the first request that misses it, or by the job an import queues (``web.bodies.digest_task``).
Its key hashes the conversation's content fingerprint (``core.store.digests``), what was asked
(provider, model, cut, repair), the attachments root, the window budget, the digest format and
Traceloupe's version, so a digest is never served for other content or by another Traceloupe.

Stored parts: ``w``/n, window n's highlighted tokens (masked, as the page shows them); ``a``/b, the entries
card anchor -> the window holding its part whose anchor falls in bucket b (``web.digest_key.bucket_of``), so a
page reads the entries of the cards it shows, not a map of every card. Serving window K reads only window K.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from core.store import Store
from core.store import digests as stored
from web.bodies.asked import WarningView
from web.bodies.builder import Built, Choices, PayloadBuilder
from web.bodies.facts import BuildFacts, decode_rendered, encode_rendered, pack, unpack
from web.bodies.jsonview import Rendered
from web.bodies.windows import WINDOW_BYTES, Layout, window_span
from web.digest_key import DigestKey, bucket_count, bucket_of

MAX_WARNINGS = 100
"""Warnings the payload page lists."""
ANCHORS_PER_BUCKET = 64
"""Card -> window entries per stored bucket, about."""


@dataclass(frozen=True, slots=True)
class WindowPlan:
    """A body's windows: where each starts (lines) and how many lines the body has."""

    starts: tuple[int, ...]
    lines: int

    @property
    def count(self) -> int:
        return len(self.starts)

    def span(self, n: int) -> tuple[int, int]:
        return window_span(self.starts, self.lines, n)

    @classmethod
    def of(cls, layout: Layout) -> WindowPlan:
        return cls(tuple(layout.starts), layout.lines)


@dataclass(frozen=True, slots=True)
class PayloadHead:
    """What the payload page shows besides the cards and the windows' text."""

    facts: BuildFacts
    warnings: tuple[WarningView, ...]
    warnings_total: int
    plan: WindowPlan | None
    """None when the request could not be built."""
    anchor_buckets: int = 1
    """How many buckets the card -> window entries are kept in."""

    @property
    def whole_on_first_page(self) -> bool:
        """True when the first page stores all there is (one window at most): nothing is left to complete."""
        return self.plan is None or self.plan.count <= 1

    def to_json(self) -> dict[str, Any]:
        return {
            "facts": self.facts.to_json(),
            "warnings": [[w.msg_id, w.anchor, w.element, w.reason] for w in self.warnings],
            "warnings_total": self.warnings_total,
            "plan": None if self.plan is None else [list(self.plan.starts), self.plan.lines],
            "anchor_buckets": self.anchor_buckets,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PayloadHead:
        plan = data["plan"]
        return cls(
            BuildFacts.from_json(data["facts"]),
            tuple(WarningView(*w) for w in data["warnings"]),
            data["warnings_total"],
            None if plan is None else WindowPlan(tuple(plan[0]), plan[1]),
            data["anchor_buckets"],
        )


def payload_asked(
    payloads: PayloadBuilder, provider: str, upto: str | None, repair: bool, model: str | None
) -> tuple[object, ...]:
    """What a payload digest's key names besides the conversation."""
    return (provider, model or None, upto or None, repair, payloads.options.attachments_root, WINDOW_BYTES)


def payload_parts(
    payloads: PayloadBuilder, built: Built, choices: Choices | None
) -> tuple[PayloadHead, Iterator[tuple[str, int, Any]]]:
    """A build's head, and its parts as JSON values: the card -> window map, the replies the request selector
    lists (``choices``) and window 0 (the others are added as they are made: ``web.bodies.requests``)."""
    if built.result is None:
        return PayloadHead(BuildFacts.of(built), (), 0, None), iter(())
    from web.bodies.requests import body_view  # the service imports this module

    view = body_view(payloads, built)
    facts = BuildFacts.of(built, view.layout)
    warnings = built.result.warnings
    windows = view.layout.windows_of(view.anchors)
    buckets = bucket_count(len(windows), ANCHORS_PER_BUCKET)
    head = PayloadHead(
        facts,
        tuple(WarningView.of(w) for w in warnings[:MAX_WARNINGS]),
        len(warnings),
        WindowPlan.of(view.layout),
        buckets,
    )

    def parts() -> Iterator[tuple[str, int, Any]]:
        grouped: list[dict[str, int]] = [{} for _ in range(buckets)]
        for anchor, n in windows.items():
            grouped[bucket_of(anchor, buckets)][anchor] = n
        for b, entries in enumerate(grouped):
            yield "a", b, entries
        if choices is not None:  # typing a long trace's replies for their labels costs a first response most
            yield "choices", 0, [[list(choice) for choice in choices[0]], choices[1]]
        yield "w", 0, encode_rendered(view.layout.render(0, view.marks))

    return head, parts()


def window_part(payloads: PayloadBuilder, built: Built, n: int) -> Any:
    """Window ``n`` of a build's body as a digest stores it."""
    from web.bodies.requests import body_view

    view = body_view(payloads, built)
    return encode_rendered(view.layout.render(n, view.marks))


@dataclass(frozen=True, slots=True)
class StoredParts:
    """The parts of one digest (a payload's or a diff's), read one at a time, and added as they are made."""

    key: str
    store: Store | None
    """None for a digest kept in memory only (``unstored``)."""
    fresh: dict[tuple[str, int], Any] | None = None
    """The parts, when this digest was just made (no need to read back what was just written)."""

    @classmethod
    def unstored(cls, parts: Iterator[tuple[str, int, Any]]) -> StoredParts:
        """Parts held in memory and never written: what was made first, later parts made again when asked."""
        return cls("", None, {(name, n): value for name, n, value in parts})

    @classmethod
    def read(cls, store: Store, key: DigestKey) -> tuple[Any, StoredParts] | None:
        """The digest stored under ``key``: its head (JSON) and its parts; None when there is none."""
        data = stored.read_head(store.engine, key.key)
        return None if data is None else (unpack(data), cls(key.key, store))

    @classmethod
    def write(
        cls, store: Store, key: DigestKey, kind: str, head: Any, parts: Iterator[tuple[str, int, Any]]
    ) -> StoredParts:
        """Store a digest just made, its head (JSON) and its parts; the parts stay in memory for this request."""
        fresh = {(name, n): value for name, n, value in parts}
        key.write(store, kind, pack(head), ((name, n, pack(value)) for (name, n), value in fresh.items()))
        return cls(key.key, store, fresh)

    def get(self, name: str, n: int) -> Any:
        """Part ``n`` of ``name``; None when the digest does not hold it yet."""
        if self.fresh is not None or self.store is None:
            return None if self.fresh is None else self.fresh.get((name, n))
        data = stored.read_part(self.store.engine, self.key, name, n)
        return None if data is None else unpack(data)

    def some(self, name: str, numbers: Iterable[int]) -> dict[int, Any]:
        """The parts of ``name`` with these numbers that the digest holds, by number."""
        if self.fresh is not None or self.store is None:
            fresh = self.fresh or {}
            return {k: fresh[name, k] for k in numbers if (name, k) in fresh}
        return {k: unpack(data) for k, data in stored.read_parts_in(self.store.engine, self.key, name, numbers)}

    def numbered(self, name: str, first: int, end: int) -> dict[int, Any]:
        """The parts ``[first, end)`` of ``name`` that the digest holds, by number."""
        if self.fresh is not None or self.store is None:
            fresh = self.fresh or {}
            return {k: fresh[name, k] for k in range(first, end) if (name, k) in fresh}
        found = stored.read_numbered_parts(self.store.engine, self.key, name, first, end)
        return {k: unpack(data) for k, data in found}

    def put(self, name: str, n: int, value: Any) -> None:
        """Store part ``n`` of ``name`` (made from the builds after the digest); an unstored digest keeps none."""
        if self.store is None:
            return
        if self.fresh is not None:
            self.fresh[name, n] = value
        stored.write_part(self.store.engine, self.key, name, n, pack(value))

    def window(self, name: str, n: int) -> Rendered | None:
        """Window ``n`` of a pane's ``name`` highlighted; None when the digest does not hold it yet."""
        found = self.get(name, n)
        return None if found is None else decode_rendered(found)

    def add_window(self, name: str, n: int, value: Any) -> Rendered:
        """Store window ``n`` of a pane's ``name``, and give it highlighted."""
        self.put(name, n, value)
        return decode_rendered(value)


def write_missing_parts(target: StoredParts, parts: Iterator[tuple[str, int, Any]]) -> None:
    """Store each part the digest lacks as it is made, holding none: a long trace's windows never sit in memory
    at once (``put`` skips a part already stored)."""
    for name, n, value in parts:
        target.put(name, n, value)


@dataclass(frozen=True, slots=True)
class PayloadDigest:
    """A payload digest as read: its head and its parts."""

    head: PayloadHead
    parts: StoredParts

    def window(self, n: int) -> Rendered | None:
        """Window ``n`` highlighted; None when the digest does not hold it yet."""
        return self.parts.window("w", n)

    def add_window(self, n: int, value: Any) -> Rendered:
        """Store window ``n`` (made from the build) in the digest, and give it highlighted."""
        return self.parts.add_window("w", n, value)

    def choices(self) -> Choices | None:
        """The replies the request selector lists, and how many there are; None when the digest has none."""
        found = self.parts.get("choices", 0)
        return None if found is None else ([(msg_id, label) for msg_id, label in found[0]], found[1])

    def window_map(self, anchors: Iterable[str] | None = None) -> dict[str, int]:
        """Card anchor -> the window holding the first line of its part: of every card, or of ``anchors`` (only
        their buckets read)."""
        buckets = self.head.anchor_buckets
        asked = None if anchors is None else list(anchors)
        wanted = range(buckets) if asked is None else {bucket_of(anchor, buckets) for anchor in asked}
        found: dict[str, int] = {}
        for entries in self.parts.some("a", wanted).values():
            found.update(entries)
        return found if asked is None else {a: found[a] for a in asked if a in found}

    def texts(self) -> Iterator[bytes]:
        """The whole body as the page shows it (masked), window by window."""
        if self.head.plan is None:
            return
        for n in range(self.head.plan.count):
            window = self.window(n)
            assert window is not None, "a complete digest"
            yield "".join(token.text for token in window.tokens).encode("utf-8")


def read_payload_digest(store: Store, key: DigestKey) -> PayloadDigest | None:
    """The stored digest under ``key``, or None."""
    found = StoredParts.read(store, key)
    return None if found is None else PayloadDigest(PayloadHead.from_json(found[0]), found[1])


def make_payload_digest(
    store: Store, payloads: PayloadBuilder, key: DigestKey, built: Built, choices: Choices | None
) -> PayloadDigest:
    """Make the digest of ``built`` (its first window), store it, and return it (its parts kept in memory)."""
    head, parts = payload_parts(payloads, built, choices)
    return PayloadDigest(head, StoredParts.write(store, key, "payload", head.to_json(), parts))
