"""Where the dashboard reads conversations from: the store, behind one small object with a cache.

``StoreSource`` wraps :class:`core.store.Store`. The list, the runs and the
imports go straight to the store (keyset pages, search and filters run in SQL).
Opening a conversation orders its timeline from the outlines the import stored
(``web.timeline.stored``; SQLite), reading only the JSON of the records a page shows;
where there are none (PostgreSQL, messages imported before revision 0003) it reads the
stored JSON as text and decodes each record's outline from it (``web.timeline.outline``).
Either way the conversation page types only the records of the page it shows. The
typed messages (every record through the Message union) are made on first use, by the
pages that need all of them (payload, diff, API), once per load. Both are kept in a small LRU cache keyed by the
conversation's *version*, the figures an import changes (messages, records, last
activity): paging a long trace, the payload page, its phases fragment and the diff
reuse them; an import into the conversation changes the version and the next
request reads it again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

from core import MESSAGE_ADAPTER, Message
from core.jsonio import loads
from core.messages.door import gc_paused
from core.reader import BadMessages, Record, StoreLine
from core.request_context import StoredRequest
from core.store import ConversationPage, ConversationQuery, ConversationSummary, ImportSummary, RunView, Store
from web.lru import LruCache
from web.timeline import Order, Timeline
from web.timeline.outline import JsonOrder, OutlineError
from web.timeline.paged import PAGED_MIN_RECORDS, order_key, read_order, write_order
from web.timeline.stored import StoredOrder

Version = tuple[int, int, int, int | None]

ORDER_SHARE = 8
"""A conversation's order (outline nodes and slots) holds about an eighth of what its typed records hold (650 B
against 5.5 KB a record of the benchmark trace), so a timeline of 100,000 records stays cached while untyped."""


class Loaded:
    """One conversation as the pages need it: its figures, its timeline, and (on first use) its typed messages.

    With an ``order`` (the stored outlines'), ``bodies`` is called for the messages' JSON only when
    a page needs every message typed; without one, the timeline is ordered from ``bodies``.
    """

    def __init__(
        self,
        summary: ConversationSummary,
        bodies: Sequence[str] | Callable[[], Sequence[str]],
        order: Order | None = None,
        contexts: Callable[[], Sequence[StoredRequest]] | None = None,
    ) -> None:
        self.summary = summary
        self._bodies = bodies
        self._contexts = contexts
        self._read_contexts: Sequence[StoredRequest] | None = None
        self._messages: tuple[Message, ...] | None = None
        self._lock = threading.Lock()
        self.on_typed: Callable[[], None] | None = None
        """Called once the messages are typed (the cache weighs the conversation again: it now holds more)."""
        if order is not None:
            self.timeline = Timeline(order)
            return
        try:
            self.timeline = Timeline(JsonOrder(self._texts()))
        except OutlineError:
            self.timeline = Timeline(self.messages)  # JSON too deep for the outline decoder: order the typed messages

    def _texts(self) -> Sequence[str]:
        if callable(self._bodies):
            self._bodies = self._bodies()
        return self._bodies

    @property
    def messages(self) -> tuple[Message, ...]:
        """Every top-level message typed through the Message union, records and all (made once, on first use)."""
        typed = False
        if self._messages is None:
            # The collector paused for the decode too (the door pauses it for validation): a long trace is
            # hundreds of thousands of objects at once, and none of them forms a cycle.
            with self._lock, gc_paused():
                if self._messages is None:
                    self._messages = tuple(MESSAGE_ADAPTER.validate_python(loads(body)) for body in self._texts())
                    typed = True
            if typed and self.on_typed is not None:
                self.on_typed()
        return self._messages

    @property
    def contexts(self) -> Sequence[StoredRequest]:
        """The request contexts the conversation stored (``core.request_context``), read on first use."""
        if self._read_contexts is None:
            self._read_contexts = self._contexts() if self._contexts is not None else ()
        return self._read_contexts

    @property
    def typed(self) -> bool:
        """Whether the typed messages have been made (the conversation page never makes them)."""
        return self._messages is not None

    @property
    def size(self) -> int:
        """Messages and records together: what the caches budget by."""
        return self.summary.messages + self.summary.records

    @property
    def held(self) -> int:
        """What the conversation cache weighs it by: its size once typed, a share of it while it holds its order."""
        return self.size if self.typed else -(-self.size // ORDER_SHARE)


def version_of(summary: ConversationSummary) -> Version:
    """What an import into the conversation changes (imports only add; re-importing is a no-op)."""
    return (summary.messages, summary.records, summary.damaged, summary.last_activity)


class ConversationCache:
    """Recently opened conversations, least recently used out first, bounded by records held and by count.

    Keyed by conversation id, each entry with its version: an import that changes the conversation
    makes its entry stale, and the next load replaces it. The records bound is the one that matters
    for memory (an entry weighs ``Loaded.held``: less while only its order is made); the count is high,
    so that readers opening many small conversations do not push out a long trace that costs seconds
    to read again.
    """

    def __init__(self, max_items: int = 256, max_records: int = 60_000) -> None:
        self._items: LruCache[str, tuple[Version, Loaded]] = LruCache(
            max_items, weight=_records_held, max_weight=max_records
        )

    def get(self, conversation_id: str, version: Version) -> Loaded | None:
        hit = self._items.get(conversation_id)
        return hit[1] if hit is not None and hit[0] == version else None

    def put(self, loaded: Loaded) -> None:
        self._items.put(loaded.summary.conversation_id, (version_of(loaded.summary), loaded))


def _records_held(entry: tuple[Version, Loaded]) -> int:
    return entry[1].held


class StoreSource:
    """The store as the dashboard reads it; the one object controllers ask for conversations and runs."""

    def __init__(self, store: Store, cache: ConversationCache | None = None) -> None:
        self.store = store
        self.cache = cache or ConversationCache()

    def list(self, query: ConversationQuery) -> ConversationPage:
        """One keyset page of the conversation list (search and filters in SQL)."""
        return self.store.list_conversations(query)

    def summary(self, conversation_id: str) -> ConversationSummary:
        """One conversation's figures, without reading its messages; UnknownNameError when there is none."""
        return self.store.get_summary(conversation_id)

    def load(self, conversation_id: str) -> Loaded:
        """The conversation parsed and ordered, from the cache while no import has changed it."""
        summary = self.summary(conversation_id)
        hit = self.cache.get(conversation_id, version_of(summary))
        if hit is not None:
            return hit
        loaded = self._from_stored_order(summary) or self._from_outlines(conversation_id)
        if loaded is None:
            stored = self.store.get_conversation_json(conversation_id)
            loaded = Loaded(stored.summary, stored.bodies, contexts=self._contexts_of(conversation_id))
        self.cache.put(loaded)
        loaded.on_typed = lambda: self.cache.put(loaded)
        return loaded

    def _from_stored_order(self, summary: ConversationSummary) -> Loaded | None:
        """A long conversation ordered from the order its digest job stored (``web.timeline.paged``), read by
        chunks; None when there is none for its content as stored now."""
        if summary.records < PAGED_MIN_RECORDS:
            return None
        conversation_id = summary.conversation_id
        order = read_order(self.store, conversation_id)
        if order is None:
            return None
        return Loaded(
            summary,
            lambda: self.store.get_conversation_json(conversation_id).bodies,
            order,
            self._contexts_of(conversation_id),
        )

    def store_order(self, conversation_id: str) -> bool:
        """Order the conversation whole from its outlines and store that order to be read by chunks (the digest
        job's first step); False when it is not (a short conversation, no outlines, an irregular record)."""
        if self.summary(conversation_id).records < PAGED_MIN_RECORDS:
            return False  # ordered whole on a load, fast enough: nothing would read it
        key = order_key(self.store, conversation_id)
        if key is None:
            return False
        if read_order(self.store, conversation_id) is not None:
            return True
        loaded = self._from_outlines(conversation_id)
        order = loaded.timeline.order if loaded is not None else None
        return isinstance(order, StoredOrder) and write_order(self.store, key, order)

    def _from_outlines(self, conversation_id: str) -> Loaded | None:
        """The conversation ordered from its stored outlines (SQLite); None where there are none to read."""
        stored = self.store.get_conversation_outline(conversation_id)
        if stored is None:
            return None
        try:
            # The collector paused, as for typing: ten thousand slots at once, none of them in a cycle.
            with gc_paused():
                order = StoredOrder(stored.outlines, self.store.read_spans)
        except OutlineError:
            return None
        rows = [row for row, _ in stored.outlines]
        return Loaded(stored.summary, lambda: self.store.get_bodies(rows), order, self._contexts_of(conversation_id))

    def _contexts_of(self, conversation_id: str) -> Callable[[], Sequence[StoredRequest]]:
        return lambda: self.store.request_contexts(conversation_id)

    def runs(
        self, conversation_id: str | None = None, *, limit: int = 50, cursor: str | None = None
    ) -> tuple[tuple[RunView, ...], str | None]:
        """Recorded runs, newest first (read-only: replays create them)."""
        if conversation_id is not None:
            self.summary(conversation_id)  # an unknown conversation is a 404, not an empty list
        return self.store.list_runs(conversation_id, limit=limit, cursor=cursor)

    def import_records(
        self,
        records: Iterable[Record],
        *,
        source: str,
        store_lines: Sequence[StoreLine] = (),
        bad: BadMessages | None = None,
        digest_min_records: int | None = None,
    ) -> ImportSummary:
        """Store one file's records (and its store lines: runs, suites...) all-or-nothing (the CLI's ``import``)."""
        return self.store.import_records(
            records, source=source, store_lines=store_lines, bad=bad, digest_min_records=digest_min_records
        )
