"""Trace placement: records ordered by create_ts, stably, split around their user message, to a depth bound.

``place`` is the one implementation every reader uses (ChatLLM's history expansion, the typed
timeline, the timeline read from stored JSON, the one read from stored outlines). Its oracle here is
the seed's rule stated record by record: a record goes before its message exactly when it is stamped
earlier, and records on one side keep their order by stamp, then by their stored position.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from core import BaseMessage, IntermediateTrace, Message, TextMessage
from core.messages.placement import Run, Side, expand_trace_for_msg, place, place_messages


@dataclass(frozen=True)
class Node:
    id: str
    ts: int
    records: tuple[Node, ...] = ()


def _place(nodes: list[Node], max_depth: int) -> list[Run[Node]]:
    return place(
        nodes, records=attrgetter("records"), stamp=attrgetter("ts"), ident=attrgetter("id"), max_depth=max_depth
    )


def _flat(runs: list[Run[Node]]) -> list[tuple[str, Side, str | None]]:
    return [(node.id, run.side, run.parent) for run in runs for node in run.nodes]


def _oracle(
    nodes: list[Node], side: Side, parent: str | None, level: int, max_depth: int
) -> list[tuple[str, Side, str | None]]:
    out: list[tuple[str, Side, str | None]] = []
    for node in nodes:
        if level >= max_depth or not node.records:
            out.append((node.id, side, parent))
            continue
        by_stamp = [r for _, _, r in sorted((r.ts, i, r) for i, r in enumerate(node.records))]
        out += _oracle([r for r in by_stamp if r.ts < node.ts], "before", node.id, level + 1, max_depth)
        out.append((node.id, side, parent))
        out += _oracle([r for r in by_stamp if r.ts >= node.ts], "after", node.id, level + 1, max_depth)
    return out


def _tree(shape: Any, path: str) -> Node:
    ts, children = shape
    return Node(path, ts, tuple(_tree(child, f"{path}.{i}") for i, child in enumerate(children)))


# Stamps from a few values, so that ties (the stable sort's business) are common.
_shapes = st.recursive(
    st.tuples(st.integers(0, 4), st.just(())),
    lambda inner: st.tuples(st.integers(0, 4), st.lists(inner, max_size=6).map(tuple)),
    max_leaves=40,
)


@given(st.lists(_shapes, max_size=4), st.integers(0, 4))
def test_records_go_before_their_message_exactly_when_stamped_earlier(shapes: list[Any], max_depth: int) -> None:
    nodes = [_tree(shape, str(i)) for i, shape in enumerate(shapes)]
    assert _flat(_place(nodes, max_depth)) == _oracle(nodes, "top", None, 0, max_depth)


def test_equal_stamps_keep_stored_order_around_the_message() -> None:
    records = tuple(Node(name, ts) for name, ts in [("b", 5), ("a", 3), ("c", 5), ("d", 3), ("e", 4), ("f", 5)])
    placed = _flat(_place([Node("u", 5, records), Node("v", 3, records)], max_depth=1))
    assert [(i, side) for i, side, _ in placed][:7] == [
        ("a", "before"), ("d", "before"), ("e", "before"), ("u", "top"), ("b", "after"), ("c", "after"), ("f", "after")
    ]  # fmt: skip
    assert [i for i, _, parent in placed[7:] if parent == "v"] == ["a", "d", "e", "b", "c", "f"]  # 3 is not before 3


def test_records_past_the_depth_bound_stay_inside_their_record() -> None:
    node = Node("leaf", 0)
    for level in range(6):
        node = Node(f"u{level}", 1, (node, Node(f"s{level}", 1)))
    for max_depth in range(9):
        placed = _flat(_place([node], max_depth))
        assert len(placed) == 1 + 2 * min(max_depth, 6)
        assert ("leaf" in [i for i, _, _ in placed]) == (max_depth >= 6)
    assert _flat(_place([node], 2)) == [
        ("u5", "top", None), ("u4", "after", "u5"), ("u3", "after", "u4"), ("s4", "after", "u4"), ("s5", "after", "u5")
    ]  # fmt: skip


def test_the_usual_trace_is_three_runs_however_long() -> None:
    records = tuple(Node(f"r{i}", i) for i in range(10_000))
    runs = _place([Node("first", 0), Node("u", 5_000, records), Node("last", 20_000)], max_depth=16)
    assert [(len(run.nodes), run.side, run.parent) for run in runs] == [
        (1, "top", None), (5_000, "before", "u"), (1, "top", None), (5_000, "after", "u"), (1, "top", None)
    ]  # fmt: skip


def _typed(msg_id: str, ts: int, *records: Message) -> TextMessage:
    return TextMessage(
        content=msg_id, msg_id=msg_id, create_ts=ts, intermediate_trace=IntermediateTrace(records=list(records))
    )


def test_typed_messages_place_user_message_traces_only() -> None:
    inner = BaseMessage(role="console", content="inner", msg_id="k", create_ts=0)
    records: list[Message] = [_typed("late", 9, inner), BaseMessage(role="tool", msg_id="early", create_ts=1)]
    runs = place_messages([_typed("u", 5, *records)], max_depth=2)
    assert [(m.msg_id, run.side, run.parent) for run in runs for m in run.nodes] == [
        ("early", "before", "u"), ("u", "top", None), ("k", "before", "late"), ("late", "after", "u")
    ]  # fmt: skip


def test_equal_timestamps_keep_stored_order_after_the_user_message() -> None:
    records: list[Message] = [_typed("second", 1000), _typed("third", 1000)]
    pre, post = expand_trace_for_msg(_typed("first", 1000, *records))
    assert pre == [] and [m.msg_id for m in post] == ["second", "third"]
    assert expand_trace_for_msg(BaseMessage(role="tool", msg_id="t", create_ts=1)) == ([], [])
