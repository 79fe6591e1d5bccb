"""The diff page's digest: both builds' facts, the changes counted by cause, every window and listing, stored.

Like the payload page's (``web.bodies.digest``, whose key rules it shares), made by the first request
that misses it or by the job an import queues. Stored parts: ``L``/n and ``R``/n, window n of each pane
with its changes marked; ``c:<cause>``/k, the k-th listing of a cause (``LISTED`` changes, each with
the windows that hold it); ``first``/0, every cause's first listing, which the first response shows;
``choices``/0, the replies the request selector lists.
Masked text only: the change lines and the warnings are masked before they are stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from core.providers import Degradation
from core.store import Store
from web import masking
from web.bodies.builder import Built, Choices, PayloadBuilder
from web.bodies.compare import LISTED, ChangeView, Comparison, GroupFacts, Listing, window_ids
from web.bodies.digest import StoredParts, WindowPlan
from web.bodies.facts import BuildFacts, encode_rendered
from web.bodies.jsonview import Rendered
from web.bodies.windows import PANE_WINDOW_BYTES, Layout
from web.digest_key import DigestKey

SIDE_PARTS = {"left": "L", "right": "R"}


def diff_asked(payloads: PayloadBuilder, left: str, right: str, upto: str | None, repair: bool) -> tuple[object, ...]:
    """What a diff digest's key names besides the conversation."""
    return (left, right, upto or None, repair, payloads.options.attachments_root, PANE_WINDOW_BYTES, LISTED)


@dataclass(frozen=True, slots=True)
class DiffHead:
    """What the diff page shows besides its windows' text and its listings."""

    left: BuildFacts
    right: BuildFacts
    changes_total: int
    groups: tuple[GroupFacts, ...]
    left_plan: WindowPlan | None
    right_plan: WindowPlan | None
    """None (both) when either request could not be built."""

    def plan(self, side: str) -> WindowPlan | None:
        return self.left_plan if side == "left" else self.right_plan

    @property
    def whole_on_first_page(self) -> bool:
        """True when the first page stores all there is (one window a side, one listing a cause)."""
        windows = all(p is None or p.count <= 1 for p in (self.left_plan, self.right_plan))
        return windows and all(chunk_count(g) == 1 for g in self.groups)

    def group(self, cause: str) -> GroupFacts | None:
        return next((g for g in self.groups if g.cause == cause), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "left": self.left.to_json(),
            "right": self.right.to_json(),
            "changes_total": self.changes_total,
            "groups": [
                [g.cause, g.title, g.explanation, g.count, [[s, *w] for s, w in g.warnings], g.warnings_total]
                for g in self.groups
            ],
            "plans": [_plan_json(self.left_plan), _plan_json(self.right_plan)],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DiffHead:
        groups = tuple(
            GroupFacts(cause, title, why, count, tuple((w[0], Degradation(*w[1:])) for w in warnings), total)
            for cause, title, why, count, warnings, total in data["groups"]
        )
        lplan, rplan = (None if p is None else WindowPlan(tuple(p[0]), p[1]) for p in data["plans"])
        return cls(
            BuildFacts.from_json(data["left"]),
            BuildFacts.from_json(data["right"]),
            data["changes_total"],
            groups,
            lplan,
            rplan,
        )


def _plan_json(plan: WindowPlan | None) -> list[Any] | None:
    return None if plan is None else [list(plan.starts), plan.lines]


def _group_facts(comparison: Comparison) -> tuple[GroupFacts, ...]:
    out = []
    for g in comparison.groups:
        warnings = tuple(
            (side, Degradation(w.msg_id, masking.mask(w.element), masking.mask(w.reason)))
            for side, w in g.warnings[:LISTED]
        )
        out.append(GroupFacts(g.cause, g.title, g.explanation, len(g.changes), warnings, len(g.warnings)))
    return tuple(out)


def listing_chunk(comparison: Comparison, cause: str, k: int, left: Layout, right: Layout) -> list[Any]:
    """The k-th listing of a cause as a digest stores it: each change's op, number, masked line and windows."""
    group = next(g for g in comparison.groups if g.cause == cause)
    return [
        [item.change.op, item.number, masking.mask(item.line), window_ids(item.change, left, right)]
        for item in group.changes[k * LISTED : (k + 1) * LISTED]
    ]


def chunk_count(group: GroupFacts) -> int:
    """How many listings a cause has (a cause with warnings and no change has one, empty)."""
    return max(1, -(-group.count // LISTED))


def diff_parts(
    payloads: PayloadBuilder,
    lbuilt: Built,
    rbuilt: Built,
    *,
    every_window: bool = False,
    choices: Choices | None = None,
    held: Callable[[str, int], bool] | None = None,
) -> tuple[DiffHead, Iterator[tuple[str, int, Any]]]:
    """Both builds' head, and the parts as JSON values: each cause's first listing and window 0 of both panes
    (every listing and window with ``every_window``; a request adds the others as they are asked for, the
    background job all of them, less those ``held`` says the store holds)."""
    if lbuilt.result is None or rbuilt.result is None:
        return DiffHead(BuildFacts.of(lbuilt), BuildFacts.of(rbuilt), 0, (), None, None), iter(())
    from web.bodies.diffs import comparison_of  # the service imports this module
    from web.bodies.requests import body_view  # the service imports the payload digest, which imports this

    # Kept with the builds: the rest of the digest, made after the answer (``web.backlog``), reads it again.
    comparison = comparison_of(payloads, lbuilt, rbuilt)
    left = body_view(payloads, lbuilt, PANE_WINDOW_BYTES).layout
    right = body_view(payloads, rbuilt, PANE_WINDOW_BYTES).layout
    lfacts, rfacts = BuildFacts.of(lbuilt, left), BuildFacts.of(rbuilt, right)
    head = DiffHead(
        lfacts,
        rfacts,
        len(comparison.changes),
        _group_facts(comparison),
        WindowPlan.of(left),
        WindowPlan.of(right),
    )

    skip = held or (lambda name, n: False)  # a part the store holds already is not made again (a resumed fill)

    def parts() -> Iterator[tuple[str, int, Any]]:
        if choices is not None:  # typing a long trace's replies for their labels costs a first response most
            yield "choices", 0, [[list(choice) for choice in choices[0]], choices[1]]
        first: dict[str, list[Any]] = {}
        for group in head.groups:
            for k in range(chunk_count(group) if every_window else 1):
                if k and skip(f"c:{group.cause}", k):
                    continue
                chunk = listing_chunk(comparison, group.cause, k, left, right)
                if k == 0:
                    first[f"c:{group.cause}"] = chunk
                yield f"c:{group.cause}", k, chunk
        yield "first", 0, first
        for side, layout, marks in (("L", left, comparison.left_marks), ("R", right, comparison.right_marks)):
            for n in range(layout.count if every_window else 1):
                if not skip(side, n):
                    yield side, n, encode_rendered(layout.render(n, marks))

    return head, parts()


@dataclass(frozen=True, slots=True)
class DiffDigest:
    """A diff digest as read: its head and its parts."""

    head: DiffHead
    parts: StoredParts

    def window(self, side: str, n: int) -> Rendered | None:
        """Window ``n`` of one side's pane; None when the digest does not hold it yet."""
        return self.parts.window(SIDE_PARTS[side], n)

    def add_window(self, side: str, n: int, value: Any) -> Rendered:
        """Store window ``n`` of one side (made from the builds) in the digest, and give it highlighted."""
        return self.parts.add_window(SIDE_PARTS[side], n, value)

    def choices(self) -> Choices | None:
        """The replies the request selector lists, and how many there are; None when the digest has none."""
        found = self.parts.get("choices", 0)
        return None if found is None else ([(msg_id, label) for msg_id, label in found[0]], found[1])

    def first_listings(self) -> list[Listing]:
        """Every cause's first changes, in the groups' order (causes without a change left out)."""
        first = self.parts.get("first", 0) or {}
        return [listing_of(g, 0, first[f"c:{g.cause}"]) for g in self.head.groups if f"c:{g.cause}" in first]

    def chunks(self, cause: str, first: int, end: int) -> dict[int, list[Any]]:
        """The listings ``[first, end)`` of a cause that the digest holds, by number."""
        return self.parts.numbered(f"c:{cause}", first, end)

    def add_chunk(self, cause: str, k: int, value: list[Any]) -> None:
        """Store the k-th listing of a cause (made from the builds) in the digest."""
        self.parts.put(f"c:{cause}", k, value)


def listing_of(group: GroupFacts, offset: int, items: list[Any]) -> Listing:
    """The listing of ``group`` from ``offset`` that shows ``items`` (stored listings' changes)."""
    end = offset + LISTED
    views = [ChangeView(op, number, line, windows) for op, number, line, windows in items]
    return Listing(group, views, end if end < group.count else None)


def read_diff_digest(store: Store, key: DigestKey) -> DiffDigest | None:
    """The stored digest under ``key``, or None."""
    found = StoredParts.read(store, key)
    return None if found is None else DiffDigest(DiffHead.from_json(found[0]), found[1])


def make_diff_digest(
    store: Store,
    payloads: PayloadBuilder,
    key: DigestKey,
    lbuilt: Built,
    rbuilt: Built,
    *,
    every_window: bool = False,
    choices: Choices | None = None,
) -> DiffDigest:
    """Make the digest of two builds, store it, and return it (its parts kept in memory for this request)."""
    head, parts = diff_parts(payloads, lbuilt, rbuilt, every_window=every_window, choices=choices)
    return DiffDigest(head, StoredParts.write(store, key, "diff", head.to_json(), parts))
