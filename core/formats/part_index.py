"""The index of a file's spilled events, on disk: where each event sits, where it sorts, and which events a
transcript may tie together (a union-find of their nodes), so that memory does not grow with the file.

Everything ``core.formats.parts`` would otherwise hold per event or per conversation (the events' places, the
call ids and traces seen, the parts' members) lives in a private temporary SQLite database, deleted when the
index is closed; SQLite's page cache and the latest links of the union-find (``PARENTS_HELD``) are the only
memory it takes, with a fixed filter of the nodes written there (``FLUSHED_SLOTS``).
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Hashable, Iterator

Node = str
"""A name for what ties events, by kind: ``k:`` a conversation key, ``o:`` a keyless opening, ``a:`` an event
alone, ``c:`` a tool call id, ``t:`` a trace, ``f:`` a first message. Stored as its UTF-8 bytes (lone
surrogates kept), which SQLite compares as Python compares the strings."""
OrderKey = bytes
"""Where a call sorts among a file's calls (``order_key``), as bytes that compare as its tuple does."""
LAST: OrderKey = b"\xff" * 9
"""Where a part without calls (tool runs alone) sorts: after every part with calls."""

_CACHE_KIB = 2048
"""SQLite's page cache: what the index keeps in memory, however many events it holds."""
PARENTS_HELD = 20_000
"""Union-find links kept in memory before they are written to the database: the nodes of the conversations
being read, which nearly every tie touches (a few MB, however large the file)."""
FLUSHED_SLOTS = 1 << 20
"""Slots (bytes) of the filter of nodes whose links were written to the database: a node that hashes to an
empty slot was never written, and is looked up there no more (most lookups are of new nodes: call ids, traces)."""
JOINS_HELD = 5_000
"""Ties and openings remembered as added (then it starts again): those of the conversations being read."""
_EVENTS_HELD = 1000
"""Events (keyless openings, tool runs) kept in memory before they are written to the database, a batch at a time."""

_SCHEMA = """
CREATE TABLE event (idx INTEGER PRIMARY KEY, offset INTEGER NOT NULL, length INTEGER NOT NULL,
                    node BLOB NOT NULL, start BLOB);
CREATE TABLE parent (node BLOB PRIMARY KEY, up BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE opening (first BLOB NOT NULL, node BLOB NOT NULL, PRIMARY KEY (first, node)) WITHOUT ROWID;
CREATE TABLE open_first (first BLOB PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE run (idx INTEGER PRIMARY KEY, node BLOB NOT NULL, call BLOB, key BLOB, trace BLOB);
CREATE TABLE root (node BLOB PRIMARY KEY, root BLOB NOT NULL) WITHOUT ROWID;
"""


_TWO_INTS = struct.Struct(">QQ")
"""Two unsigned 64-bit integers, big-endian: they sort as bytes as they do as numbers."""


def _unsigned(value: int) -> int:
    return min(max(value + (1 << 63), 0), (1 << 64) - 2)


def _utf8(value: str) -> bytes:
    return value.encode("utf-8", "surrogatepass")


def _sortable_text(value: str) -> bytes:
    """UTF-8 (which sorts as code points do) with NUL escaped and a terminator, so a prefix sorts first."""
    return _utf8(value).replace(b"\x00", b"\x00\xff") + b"\x00\x00"


def sortable(key: tuple[int, int, str, int, int]) -> OrderKey:
    """``order_key``'s tuple as bytes in the same order."""
    start, sent, source_id, line, index = key
    pack = _TWO_INTS.pack
    return pack(_unsigned(start), _unsigned(sent)) + _sortable_text(source_id) + pack(_unsigned(line), _unsigned(index))


class PartIndex:
    """The spilled events' index and the union-find of their nodes, in a temporary SQLite database."""

    def __init__(self, *, in_memory: bool = False) -> None:
        # "": a private on-disk database, gone on close
        self.db = sqlite3.connect(":memory:" if in_memory else "", isolation_level=None)
        for pragma in ("journal_mode = OFF", "synchronous = OFF", "temp_store = FILE", f"cache_size = -{_CACHE_KIB}"):
            self.db.execute(f"PRAGMA {pragma}")
        self.db.executescript(_SCHEMA)
        self.db.execute("BEGIN")
        self.count = 0
        self.parents: dict[bytes, bytes] = {}
        """Links written or read lately: newer than the database's, written there when there are too many."""
        self.flushed: bytearray | None = None
        """A slot set for each node whose link was written to the database (by its hash); None until one is."""
        self.events: list[tuple[int, int, int, bytes, OrderKey | None]] = []
        self.openings: list[tuple[bytes, bytes, bool]] = []
        self.runs_held: list[tuple[int, bytes, bytes | None, bytes | None, bytes | None]] = []
        self.lately: set[tuple[Hashable, ...]] = set()
        """Ties and openings added lately: every call resends its history, so ties again the call ids the last one
        tied, and opens as the last one did."""

    def close(self) -> None:
        self.db.close()

    def add_event(self, offset: int, length: int, node: Node, start: OrderKey | None) -> None:
        key = _utf8(node)
        self.events.append((self.count, offset, length, key, start))
        if len(self.events) >= _EVENTS_HELD:
            self._write_events()
        if self._up(key) is None:
            self._link(key, key)
        self.count += 1

    def known(self, node: Node) -> bool:
        """Whether an event (or a tie of one) named this node."""
        return self._up(_utf8(node)) is not None

    def _new(self, tie: tuple[Hashable, ...]) -> bool:
        """Whether ``tie`` (two nodes joined, or an opening) was not added lately; remembered from now on."""
        if tie in self.lately:
            return False
        if len(self.lately) >= JOINS_HELD:
            self.lately.clear()
        self.lately.add(tie)
        return True

    def join(self, a: Node, b: Node) -> None:
        if not self._new((a, b)):
            return
        root_a, root_b = self._find(_utf8(a)), self._find(_utf8(b))
        if root_a != root_b:
            low, high = min(root_a, root_b), max(root_a, root_b)
            self._link(high, low)
            if self._up(low) is None:
                self._link(low, low)

    def _up(self, node: bytes) -> bytes | None:
        up = self.parents.get(node)
        if up is None:
            if self.flushed is None or not self.flushed[hash(node) % FLUSHED_SLOTS]:
                return None
            row = self.db.execute("SELECT up FROM parent WHERE node = ?", (node,)).fetchone()
            if row is None:
                return None
            up = row[0]
            self._link(node, up)
        return up

    def _link(self, node: bytes, up: bytes) -> None:
        self.parents[node] = up
        if len(self.parents) >= PARENTS_HELD:
            self._write_parents()

    def _write_parents(self) -> None:
        self.db.executemany("INSERT OR REPLACE INTO parent VALUES (?, ?)", self.parents.items())
        if self.flushed is None:
            self.flushed = bytearray(FLUSHED_SLOTS)
        flushed = self.flushed
        for node in self.parents:
            flushed[hash(node) % FLUSHED_SLOTS] = 1
        self.parents.clear()

    def _write_events(self) -> None:
        self.db.executemany("INSERT INTO event VALUES (?, ?, ?, ?, ?)", self.events)
        self.events.clear()

    def _find(self, node: bytes) -> bytes:
        """The root of ``node``'s set (the node itself when nothing named it), halving the path on the way."""
        while True:
            up = self._up(node)
            if up is None or up == node:
                return node
            above = self._up(up)
            if above is None or above == up:
                return up
            self._link(node, above)
            node = above

    def add_opening(self, first: str, node: Node, open_to_all: bool) -> None:
        """A keyless call's opening under its first message; ``open_to_all``: any branch of that first message
        may continue it, or it them (every part of that first message is one)."""
        if not self._new((first, node, open_to_all)):
            return
        self.openings.append((_utf8("f:" + first), _utf8(node), open_to_all))
        if len(self.openings) >= _EVENTS_HELD:
            self._write_openings()

    def _write_openings(self) -> None:
        self.db.executemany("INSERT OR IGNORE INTO opening VALUES (?, ?)", [o[:2] for o in self.openings])
        self.db.executemany("INSERT OR IGNORE INTO open_first VALUES (?)", [o[:1] for o in self.openings if o[2]])
        self.openings.clear()

    def join_open_firsts(self) -> None:
        """Every part of a first message that a call may continue whatever its branch's user message, one."""
        self._write_openings()
        firsts = self.db.execute("SELECT first FROM open_first").fetchall()  # one row per agent's system prompt
        for (first,) in firsts:
            for (node,) in self.db.execute("SELECT node FROM opening WHERE first = ?", (first,)).fetchall():
                self.join(first.decode("utf-8", "surrogatepass"), node.decode("utf-8", "surrogatepass"))

    def add_run(self, node: Node, ties: tuple[Node | None, Node | None, Node | None]) -> None:
        """A tool run's node and what it may answer: its call id's, its conversation key's and its trace's nodes."""
        call, key, trace = (None if tie is None else _utf8(tie) for tie in ties)
        self.runs_held.append((self.count, _utf8(node), call, key, trace))
        if len(self.runs_held) >= _EVENTS_HELD:
            self._write_runs()

    def _write_runs(self) -> None:
        self.db.executemany("INSERT INTO run VALUES (?, ?, ?, ?, ?)", self.runs_held)
        self.runs_held.clear()

    def runs(self) -> Iterator[tuple[Node, Node | None, Node | None, Node | None]]:
        """The tool runs' nodes and ties, in file order, a page at a time."""
        self._write_runs()
        last = -1
        while rows := self.db.execute(
            "SELECT idx, node, call, key, trace FROM run WHERE idx > ? ORDER BY idx LIMIT 1000", (last,)
        ).fetchall():
            for idx, *nodes in rows:
                last = idx
                node, call, key, trace = (None if n is None else n.decode("utf-8", "surrogatepass") for n in nodes)
                assert node is not None
                yield node, call, key, trace

    def parts(self) -> Iterator[tuple[OrderKey, list[tuple[int, int, OrderKey | None]]]]:
        """Each part (a set of joined nodes) in order of its first call, then of its first event: where it sorts
        and its events (offset, length, where each call sorts) in file order."""
        execute = self.db.execute
        self.lately.clear()
        self._write_events()
        self._write_parents()
        execute("CREATE INDEX event_node ON event (node)")
        last = b""
        while nodes := execute(
            "SELECT DISTINCT node FROM event WHERE node > ? ORDER BY node LIMIT 1000", (last,)
        ).fetchall():
            self.db.executemany("INSERT INTO root VALUES (?, ?)", [(node, self._find(node)) for (node,) in nodes])
            last = nodes[-1][0]
        self._write_parents()  # what is left to do reads the roots, not the links
        execute("CREATE INDEX root_root ON root (root)")
        execute(
            "CREATE TABLE part AS SELECT r.root AS root, MIN(e.start) AS start, MIN(e.idx) AS first"
            " FROM event e JOIN root r ON r.node = e.node GROUP BY r.root"
        )
        members = self.db.cursor()
        for root, start in execute("SELECT root, start FROM part ORDER BY start IS NULL, start, first"):
            rows = members.execute(
                "SELECT e.offset, e.length, e.start FROM root r JOIN event e ON e.node = r.node"
                " WHERE r.root = ? ORDER BY e.idx",
                (root,),
            ).fetchall()
            yield (LAST if start is None else start), rows
