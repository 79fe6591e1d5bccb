"""A timeline's order read from stored JSON: each record's outline decoded, its message typed only when shown.

A 10,000-record trace is one stored message of some 16 MB, and typing all of it through the
Message union costs several times the page of it on screen. Here each record is decoded only as far
as ordering and linking need (msgspec skips every other key without building it): role, msg_type,
msg_id, create_ts, tool call ids, tool result call ids, and its trace's records as raw JSON. The rest
stays raw until a page shows the record; then it goes through ``MESSAGE_ADAPTER`` like any message,
so its class (a damaged bare BaseMessage included) and fields are what validating the whole gives.

The placement is ``order.flatten``'s (``core.messages.placement``, MAX_TRACE_DEPTH deep) over a user
message's trace records (a UserMessage subclass's, by the same role:msg_type tag). Two kinds of
record are typed at once, while the order is made:

- a user message with a trace: typed without it (its records are slots of their own; its card never
  reads its trace), so a long trace's message is typed without decoding the trace;
- a record whose outline is not plain (msg_id not a string, create_ts not an int, a call id not a
  string): the parser decides what they are (``"7"`` and ``7.0`` are 7), and generated defaults (a
  missing msg_id or create_ts) are made once, so every page shows the same ones.

Anything the outline cannot decode (nesting past msgspec's recursion limit) raises OutlineError; the
caller then orders the typed messages instead.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any

import msgspec

from core import MESSAGE_ADAPTER, MESSAGE_TAGS, BaseMessage, Message, ToolCall, ToolReturn, UserMessage
from core.jsonio import loads
from core.messages.placement import place
from core.messages.union import get_discriminator_value
from web.timeline.cards import Placement
from web.timeline.order import MAX_TRACE_DEPTH, CallIndex, Order, Slot

JsonText = str | bytes | memoryview | msgspec.Raw
_NOT_SET: Any = msgspec.UNSET


class OutlineError(ValueError):
    """Stored JSON the outline decoder cannot read (too deeply nested for it); type the conversation instead."""


class _Call(msgspec.Struct, gc=False):
    id: str


class _Result(msgspec.Struct, gc=False):
    call_id: str


class _Trace(msgspec.Struct, gc=False):
    # Any JSON is accepted: only a user message's trace is read; on any other record it is an unknown key.
    records: list[msgspec.Raw] | dict[str, Any] | str | int | float | bool | None = None


_AnyTrace = _Trace | list[Any] | str | int | float | bool | None


class _Outline(msgspec.Struct, gc=False):
    """What placing and linking a record needs, in the types a plain record has (msgspec checks them)."""

    role: str
    msg_id: str
    create_ts: int
    msg_type: Any = _NOT_SET
    tool_calls: list[_Call] | None = None
    tool_reses: list[_Result | str] | None = None
    intermediate_trace: _AnyTrace = None


class _LooseOutline(msgspec.Struct, gc=False):
    """The keys that decide a record's class, of any type: for a record the parser must read first."""

    role: Any = None
    msg_type: Any = _NOT_SET
    intermediate_trace: _AnyTrace = None


_FIELD_NAMES: tuple[str, ...] = tuple(
    name
    for name in dict.fromkeys(
        [*BaseMessage.model_fields, *(name for cls in MESSAGE_TAGS.values() for name in cls.model_fields)]
    )
    if name != "intermediate_trace"
)
"""Every key a message class declares (the trace aside): a stored message with no other key is read in one pass."""

_Known = msgspec.defstruct(
    "_Known",
    [
        *((name, msgspec.Raw, msgspec.field(default_factory=msgspec.Raw)) for name in _FIELD_NAMES),
        ("intermediate_trace", _AnyTrace, None),
    ],
    forbid_unknown_fields=True,
    gc=False,
)

_OUTLINE = msgspec.json.Decoder(_Outline)
_LOOSE_OUTLINE = msgspec.json.Decoder(_LooseOutline)
_KNOWN = msgspec.json.Decoder(_Known)
_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_CREATE_TS = attrgetter("create_ts")
_MSG_ID = attrgetter("msg_id")


class _Node(msgspec.Struct, gc=False):
    """One record: its JSON, what placing and linking it needs, and its typed message once made.

    ``tool_calls`` and ``tool_reses`` are the outline's (or, when typed at once, the message's): the
    call index reads ``.id`` and ``.call_id`` from either.
    """

    raw: JsonText
    msg_id: str
    role: str
    create_ts: int
    tool_calls: Sequence[_Call | ToolCall] | None
    tool_reses: Sequence[_Result | ToolReturn | str] | None
    records: Sequence[msgspec.Raw] = ()
    """Its trace's records, when it is a user message with a trace (it is typed at once, without them)."""
    typed: Message | None = None


class JsonOrder(Order):
    """The order of stored messages, from their JSON text; a record is typed when a page first asks for it."""

    def __init__(self, bodies: Iterable[JsonText]) -> None:
        nodes: list[_Node] = []
        slots: list[Slot] = []
        try:
            _place([_stored_node(body) for body in bodies], nodes, slots)
        except (msgspec.DecodeError, RecursionError) as exc:
            raise OutlineError(f"the outline decoder cannot read this conversation: {exc}") from None
        self._nodes = nodes
        self._slots = slots
        self._calls = CallIndex.of_records(nodes)
        self._lock = threading.Lock()

    def messages(self, start: int, end: int) -> list[Message]:
        out: list[Message] = []
        for node in self._nodes[start:end]:
            if node.typed is None:
                # Under the lock so two requests never type one record twice (and cache one of the two).
                with self._lock:
                    if node.typed is None:
                        node.typed = MESSAGE_ADAPTER.validate_python(loads(_buffer(node.raw)))
            out.append(node.typed)
        return out


def _place(roots: list[_Node], nodes: list[_Node], slots: list[Slot]) -> None:
    """The placement of ``order.flatten`` over nodes; a record's trace is decoded when placement asks for it."""
    runs = place(roots, records=_records, stamp=_CREATE_TS, ident=_MSG_ID, max_depth=MAX_TRACE_DEPTH)
    for run in runs:
        placement: Placement = "message" if run.side == "top" else run.side
        nodes.extend(run.nodes)
        slots.extend(Slot(node.msg_id, node.role, placement, run.parent) for node in run.nodes)


def _records(node: _Node) -> list[_Node]:
    return [_node(raw) for raw in node.records]


def _node(raw: JsonText) -> _Node:
    """A trace record's node from its outline, typed at once when the outline alone cannot stand for it."""
    try:
        outline: _Outline | _LooseOutline = _OUTLINE.decode(raw)
    except msgspec.ValidationError:
        outline = _LOOSE_OUTLINE.decode(raw)
    trace = outline.intermediate_trace
    if type(trace) is _Trace and _is_user_message(outline.role, outline.msg_type):
        fields = _FIELDS.decode(raw)
        data = {key: loads(_buffer(value)) for key, value in fields.items() if key != "intermediate_trace"}
        return _typed_node(raw, data, trace)
    if type(outline) is _Outline:
        return _Node(raw, outline.msg_id, outline.role, outline.create_ts, outline.tool_calls, outline.tool_reses)
    return _typed_node(raw, loads(_buffer(raw)), None)


def _stored_node(body: JsonText) -> _Node:
    """A stored message's node: one pass when it is a user message with a trace and no unknown key (the usual)."""
    try:
        known: Any = _KNOWN.decode(body)  # a struct made at import (defstruct): its fields are not typed statically
    except msgspec.ValidationError:  # an unknown key, kept by the parser: read the keys as they come
        return _node(body)
    trace = known.intermediate_trace
    role = loads(_buffer(known.role)) if known.role else None
    msg_type = loads(_buffer(known.msg_type)) if known.msg_type else _NOT_SET
    if type(trace) is not _Trace or not _is_user_message(role, msg_type):
        return _node(body)
    data = {name: loads(_buffer(value)) for name in _FIELD_NAMES if (value := getattr(known, name))}
    return _typed_node(body, data, trace)


def _typed_node(raw: JsonText, data: dict[str, Any], trace: _Trace | None) -> _Node:
    """A node typed at once: a user message without its trace (whose records it keeps), or an unusual record."""
    message = MESSAGE_ADAPTER.validate_python(data)
    records = trace.records if trace is not None and isinstance(trace.records, list) else ()
    return _Node(
        raw, message.msg_id, message.role, message.create_ts, message.tool_calls, message.tool_reses, records, message
    )


def _is_user_message(role: Any, msg_type: Any) -> bool:
    """Whether the parser makes a UserMessage subclass of this record (the seed's role:msg_type rule)."""
    if role != "user" or msg_type is _NOT_SET:
        return False
    cls = MESSAGE_TAGS.get(get_discriminator_value({"role": role, "msg_type": msg_type}) or "")
    return cls is not None and issubclass(cls, UserMessage)


def _buffer(raw: JsonText) -> str | bytes | memoryview:
    return memoryview(raw) if isinstance(raw, msgspec.Raw) else raw
