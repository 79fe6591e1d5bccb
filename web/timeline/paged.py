"""A long timeline's order kept in the store and read a chunk at a time: a page reads its slice, not the whole.

Ordering a 100,000-record trace from its outlines (``web.timeline.stored``) reads and places every record on
each cold load, to show a hundred cards. The conversation's digest job (``web.bodies.digest_task``) stores that
order once, as a digest of kind ``timeline`` (``core.store.digests``, keyed like the page digests by the
conversation's content, so an import that changes the conversation makes it unread)::

    head   {"total": slots, "chunk": CHUNK, "buckets": B, "turns": [msg_id, ...]}
    s/k    slots [k * CHUNK, (k + 1) * CHUNK): [msg_id, role, placement, parent_id, depth, row, *RecordPlace]
    c/b    the call index's entries whose call id hashes to b: [{call id: msg_id}, {result call id: msg_id}]

A page reads the chunks that hold its slots, the byte spans of its records (``Store.read_spans``) and the
buckets of its cards' call ids; a full scan (a kind filter, a seek, a permalink) reads every chunk, once.
A conversation with an irregular record (no plain msg_id, role or stamp: the values generated for it are
made per load) is not stored, and is ordered whole as before.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import msgspec

from core import Message
from core.store import Store
from core.store import digests as stored
from web.digest_key import DigestKey, bucket_count, bucket_of, key_for
from web.timeline.order import CallIndex, Order, Slot
from web.timeline.stored import RecordPlace, StoredOrder

KIND = "timeline"
PAGED_FORMAT = 1
"""Bumped when what the stored order holds changes."""
CHUNK = 500
"""Slots per stored chunk: a page of cards reads one or two."""
BUCKET_ENTRIES = 64
"""Call index entries per bucket, about: a page's links read a few dozen small buckets."""
PAGED_MIN_RECORDS = 2_000
"""Conversations with fewer records are ordered whole on a cold load, fast enough not to store their order."""


def _pack(value: Any) -> bytes:
    return zlib.compress(msgspec.json.encode(value), 1)


def _unpack(data: bytes) -> Any:
    return msgspec.json.decode(zlib.decompress(data))


def order_key(store: Store, conversation_id: str) -> DigestKey | None:
    """The key of the conversation's stored order, for its content as stored now (None: no such conversation)."""
    return key_for(store, conversation_id, KIND, (PAGED_FORMAT, CHUNK))


def write_order(store: Store, key: DigestKey, order: StoredOrder) -> bool:
    """Store ``order`` under ``key`` (taken before the order was read) to be read by chunks; False when it cannot
    be (an irregular record)."""
    if not order.regular:
        return False
    index = order.calls
    buckets = bucket_count(len(index.calls) + len(index.results), BUCKET_ENTRIES)
    head = {"total": len(order.slots), "chunk": CHUNK, "buckets": buckets, "turns": order.turns()}

    key.write(store, KIND, _pack(head), _parts(order, index, buckets))
    return True


def _parts(order: StoredOrder, index: CallIndex, buckets: int) -> Iterator[tuple[str, int, bytes]]:
    chunk: list[list[Any]] = []
    n = 0
    for slot, (row, place) in zip(order.slots, order.places(), strict=True):
        chunk.append([*slot, row, *place])
        if len(chunk) == CHUNK:
            yield "s", n, _pack(chunk)
            chunk, n = [], n + 1
    if chunk:
        yield "s", n, _pack(chunk)
    grouped: list[tuple[dict[str, str], dict[str, str]]] = [({}, {}) for _ in range(buckets)]
    for side, entries in ((0, index.calls), (1, index.results)):
        for call_id, msg_id in entries.items():
            grouped[bucket_of(call_id, buckets)][side][call_id] = msg_id
    for b, (calls, results) in enumerate(grouped):
        yield "c", b, _pack([calls, results])


def read_order(store: Store, conversation_id: str) -> PagedOrder | None:
    """The conversation's stored order, when one is stored for its content as it is now."""
    key = order_key(store, conversation_id)
    if key is None:
        return None
    head = stored.read_head(store.engine, key.key)
    return None if head is None else PagedOrder(store, key.key, _unpack(head))


class _Slots(Sequence[Slot]):
    """The stored slots, read a chunk at a time as they are asked for, and kept."""

    def __init__(self, store: Store, key: str, total: int, chunk: int) -> None:
        self._store = store
        self._key = key
        self._total = total
        self._chunk = chunk
        self._chunks: dict[int, list[list[Any]]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._total

    @overload
    def __getitem__(self, index: int) -> Slot: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Slot]: ...

    def __getitem__(self, index: int | slice) -> Slot | Sequence[Slot]:
        if isinstance(index, slice):
            positions = range(*index.indices(self._total))
            return [_slot(item) for item in self.items(positions)]
        position = index + self._total if index < 0 else index
        if not 0 <= position < self._total:
            raise IndexError(index)
        return _slot(self.items([position])[0])

    def __iter__(self) -> Iterator[Slot]:
        chunks = self._read(range(-(-self._total // self._chunk)))
        for k in sorted(chunks):
            yield from map(_slot, chunks[k])

    def items(self, positions: Sequence[int]) -> list[list[Any]]:
        """The stored items of the slots at ``positions`` (their chunks read in one query when not held)."""
        size = self._chunk
        chunks = self._read(sorted({p // size for p in positions}))
        return [chunks[p // size][p % size] for p in positions]

    def _read(self, numbers: Sequence[int]) -> dict[int, list[list[Any]]]:
        with self._lock:
            held = self._chunks
            missing = [k for k in numbers if k not in held]
            if missing:
                for k, data in stored.read_parts_in(self._store.engine, self._key, "s", missing):
                    held[k] = _unpack(data)
            if any(k not in held for k in numbers):
                raise LookupError(f"the stored timeline order {self._key} lacks a chunk")
            return {k: held[k] for k in numbers}


def _slot(item: list[Any]) -> Slot:
    return Slot(item[0], item[1], item[2], item[3], item[4])


def _place(item: list[Any]) -> tuple[int, RecordPlace]:
    return item[5], RecordPlace(*item[6:])


class PagedOrder(Order):
    """A timeline's order read from the store by chunks (see the module); records typed when a page asks."""

    def __init__(self, store: Store, key: str, head: dict[str, Any]) -> None:
        self._store = store
        self._key = key
        self._buckets: int = head["buckets"]
        self._turns: list[str] = head["turns"]
        self._paged = _Slots(store, key, head["total"], head["chunk"])
        self._slots = self._paged
        self._index = CallIndex()
        self._held_buckets: set[int] = set()
        self._typed: dict[int, Message] = {}
        self._lock = threading.Lock()

    @property
    def calls(self) -> CallIndex:
        """The whole call index (every bucket read): for callers that do not say which links they need."""
        return self._links(range(self._buckets))

    def calls_for(self, messages: Sequence[Message]) -> CallIndex:
        ids = [call.id for m in messages for call in m.tool_calls or ()]
        ids += [res.call_id for m in messages for res in m.tool_reses or () if not isinstance(res, str)]
        return self._links({bucket_of(call_id, self._buckets) for call_id in ids})

    def _links(self, buckets: Iterable[int]) -> CallIndex:
        with self._lock:
            missing = [b for b in buckets if b not in self._held_buckets]
            for _, data in stored.read_parts_in(self._store.engine, self._key, "c", missing):
                calls, results = _unpack(data)
                self._index.calls.update(calls)
                self._index.results.update(results)
            self._held_buckets.update(missing)
            return self._index

    def turns(self) -> list[str]:
        return list(self._turns)

    def messages(self, start: int, end: int) -> list[Message]:
        return self.messages_at(range(max(0, start), min(end, len(self._paged))))

    def messages_at(self, positions: Sequence[int]) -> list[Message]:
        with self._lock:
            typed = self._typed
            missing = [p for p in positions if p not in typed]
            if missing:
                places = [_place(item) for item in self._paged.items(missing)]
                spans = [place.spans(row) for row, place in places]
                pieces = self._store.read_spans([span for each in spans for span in each])
                at = 0
                for position, (_, place), each in zip(missing, places, spans, strict=True):
                    typed[position] = place.type_from(pieces[at : at + len(each)])
                    at += len(each)
            return [typed[p] for p in positions]
