"""Trace placement: where each intermediate record stands around the user message whose trace holds it.

The seed's ``_expand_trace_for_msg`` rule, written once for every reader of a conversation: a user
message's trace records are ordered by ``create_ts`` (a stable sort, so equal stamps keep their
stored order), those stamped earlier than the message go before it, every other one after it.
Records that hold traces of their own are expanded the same way, up to a depth the caller sets.

The nodes are anything: typed messages (``place_messages``), outlines decoded from stored JSON,
outline trees from the store. Key functions say how to read a node's records, stamp and id, so the
rule never depends on how a reader holds its messages.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from typing import Generic, Literal, NamedTuple, TypeVar

from core.messages.union import Message
from core.messages.user import UserMessage

N = TypeVar("N")

Side = Literal["top", "before", "after"]
"""One of the nodes given (``top``), or a trace record placed before or after the node that holds it."""


class Run(NamedTuple, Generic[N]):
    """Consecutive nodes that share a side and a parent: what a reader appends in one step.

    Runs, not one tuple per node, so a 10,000-record trace costs a sort and a few slices.
    """

    nodes: Sequence[N]
    side: Side
    parent: str | None
    """The id of the node whose trace holds these nodes; None for ``top``."""


def split_trace(records: Iterable[N], stamp: int, key: Callable[[N], int]) -> tuple[list[N], list[N]]:
    """Records ordered by ``key`` (stably) and split: those before ``stamp``, then the rest."""
    ordered = sorted(records, key=key)
    split = bisect_left(ordered, stamp, key=key)
    return ordered[:split], ordered[split:]


def place(
    nodes: Iterable[N],
    *,
    records: Callable[[N], Sequence[N] | None],
    stamp: Callable[[N], int],
    ident: Callable[[N], str],
    max_depth: int,
) -> list[Run[N]]:
    """The nodes in reading order, each one's trace records split around it, ``max_depth`` levels deep.

    ``records`` gives a node's trace records (empty or None when it has none or is not a user
    message); it is called once per node above ``max_depth``, so a reader may decode them there. A node
    at level ``max_depth`` is not expanded: its records stay inside it.
    """
    out: list[Run[N]] = []

    def expand(siblings: Sequence[N], side: Side, parent: str | None, level: int) -> None:
        if not siblings:
            return
        traces = [] if level >= max_depth else list(map(records, siblings))  # each node's records read once
        if not any(traces):  # the usual trace, records without traces of their own: one run
            out.append(Run(siblings, side, parent))
            return
        start = 0
        for i, children in enumerate(traces):
            if not children:
                continue
            node = siblings[i]
            if start < i:
                out.append(Run(siblings[start:i], side, parent))
            before, after = split_trace(children, stamp(node), stamp)
            node_id = ident(node)
            expand(before, "before", node_id, level + 1)
            out.append(Run(siblings[i : i + 1], side, parent))
            expand(after, "after", node_id, level + 1)
            start = i + 1
        if start < len(siblings):
            out.append(Run(siblings[start:], side, parent))

    expand(list(nodes), "top", None, 0)
    return out


_CREATE_TS = attrgetter("create_ts")
_MSG_ID = attrgetter("msg_id")


def trace_records(msg: Message) -> list[Message] | None:
    """A typed message's trace records as placement reads them: a user message's, no other record's."""
    return msg.intermediate_trace.records if isinstance(msg, UserMessage) else None


def place_messages(messages: Iterable[Message], *, max_depth: int) -> list[Run[Message]]:
    """:func:`place` over typed messages."""
    return place(messages, records=trace_records, stamp=_CREATE_TS, ident=_MSG_ID, max_depth=max_depth)


def expand_trace_for_msg(msg: Message) -> tuple[list[Message], list[Message]]:
    """A user message's trace records before it and after it (the seed's name); none for any other record."""
    records = trace_records(msg)
    return split_trace(records, msg.create_ts, _CREATE_TS) if records else ([], [])
