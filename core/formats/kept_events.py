"""Where a file's events wait while its parts are found (``core.formats.parts``): spilled to a temporary file, or
held in memory when the caller holds them anyway.

A spilled call does not carry its messages: its input resends the history, so each message is pickled once, when
first seen among the messages written lately, and calls name their messages by where they sit. The spill grows
with a file's distinct messages, not with its resent ones, and a part's calls read back share one object per
message, as the reader made them.
"""

from __future__ import annotations

import io
import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import UTC, datetime, timedelta
from operator import attrgetter
from typing import IO, Any

from core.formats.events import ConversationKey, Event, ModelCall, SourceRef, ToolExecution
from core.formats.resent import Resent
from core.llm.messages import LLMMessage
from core.request_context.stored import StoredRequest

RECENT_MESSAGES = 5_000
"""Messages a spill remembers as written (then it starts again): those of the conversations being read."""

BUFFER_BYTES = 1 << 20
"""Pickles gathered in memory before they are written to the spill."""

Place = tuple[int, int]
"""Where a pickle sits in the spill: its offset and length."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _instant(value: datetime | None) -> datetime | int | None:
    """A UTC time as its microseconds since the epoch (a pickled datetime spells its class and rebuilds its time
    zone); any other time as it is."""
    if value is not None and value.tzinfo is UTC and not value.fold:
        return (value - _EPOCH) // _MICROSECOND
    return value


def _time(value: datetime | int | None) -> datetime | None:
    return _EPOCH + timedelta(microseconds=value) if isinstance(value, int) else value


@dataclass(frozen=True, slots=True)
class _Layout:
    """How an event class is spilled: its fields' values in order, its source and key (the first two fields of
    every event) as their own values and its times as ``_instant`` writes them. Each pickle is read alone, so it
    spells every class it holds by module and name, which the pickler imports again to check."""

    cls: type[Event]
    values: Callable[[Event], tuple[Any, ...]]
    times: tuple[int, ...]


def _layout(cls: type[Event]) -> _Layout:
    names = [f.name for f in fields(cls)]
    assert names[:2] == ["source", "key"], names
    return _Layout(cls, attrgetter(*names), (names.index("started_at"), names.index("ended_at")))


_LAYOUTS = (_layout(ModelCall), _layout(ToolExecution))
"""Each event class by its number, written before its values."""
_CALL_FIELDS = [f.name for f in fields(ModelCall)]
_INPUT, _OUTPUT, _REQUEST = (_CALL_FIELDS.index(name) for name in ("input", "output", "request"))
_source_values = attrgetter(*(f.name for f in fields(SourceRef)))


def _init_values(cls: type) -> Callable[[object], tuple[object, ...]] | None:
    """What ``cls(*values)`` makes an instance again from: a dataclass's field values in order (read in C); None
    for a class that is not such a dataclass."""
    if not is_dataclass(cls) or hasattr(cls, "__post_init__"):
        return None
    names = [f.name for f in fields(cls)]
    if len(names) < 2 or not all(f.init and not f.kw_only for f in fields(cls)):
        return None
    return attrgetter(*names)


class _FieldsPickler(pickle.Pickler):
    """Dataclasses pickled as their class and field values, not by ``dataclasses``' own ``__getstate__``, which
    lists the class's fields again for every instance (an event holds several: its source, key, request)."""

    def __init__(self, file: IO[bytes]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.values_of: dict[type, Callable[[object], tuple[object, ...]] | None] = {}

    def reducer_override(self, obj: object) -> Any:
        cls = type(obj)
        if cls not in self.values_of:
            self.values_of[cls] = _init_values(cls)
        values = self.values_of[cls]
        return NotImplemented if values is None else (cls, values(obj))


class SpilledEvents:
    """Events pickled to a temporary file as they come, read back one part at a time."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file
        self.fd = file.fileno()
        self.unsynced = False
        """Pickles written to ``file`` that it may still buffer: read back by ``os.pread``, past its buffer."""
        self.buffer = io.BytesIO()
        """Pickles not yet in ``file``: where each ends is known without asking the file (a system call)."""
        self.flushed = file.tell()
        self.pickler = _FieldsPickler(self.buffer)
        self.recent: dict[int, tuple[LLMMessage, Place]] = {}
        """Messages written lately by ``id``, each kept (so that its ``id`` names no other) with where it sits."""
        self.last_request: tuple[StoredRequest, Place] | None = None
        """The request written last and where it sits: an agent's calls carry the same one."""
        self.resent: Resent[LLMMessage, Place] = Resent()
        """Per trace, the last call's messages and their places: a call's resent history is placed already."""

    def write(self, event: Event) -> Place:
        kind = 0 if isinstance(event, ModelCall) else 1
        layout = _LAYOUTS[kind]
        values = list(layout.values(event))
        values[0], values[1] = _source_values(event.source), (event.key.conversation, event.key.thread)
        for at in layout.times:
            values[at] = _instant(values[at])
        if isinstance(event, ModelCall):  # its messages and request as their places
            values[_INPUT], values[_OUTPUT] = self._call_places(event)
            values[_REQUEST] = self._request_place(event.request)
        return self._dump((kind, tuple(values)))

    def written(self) -> None:
        """Every event is written: what was kept to write them is let go, and the file holds them all."""
        self._flush()
        self.recent.clear()
        self.last_request = None
        self.resent.clear()

    def read(self, offset: int, length: int, part: PartReads) -> Event:
        """The event written at ``offset``, its messages and request read once per ``part``."""
        kind, written = self._load(offset, length)
        layout = _LAYOUTS[kind]
        values = list(written)
        values[0], values[1] = SourceRef(*values[0]), ConversationKey(*values[1])
        for at in layout.times:
            values[at] = _time(values[at])
        if layout.cls is ModelCall:
            trace = values[0].trace
            values[_INPUT], values[_OUTPUT] = self._call_messages(trace, values[_INPUT], values[_OUTPUT], part)
            values[_REQUEST] = None if values[_REQUEST] is None else self._read_once(values[_REQUEST], part.read)
        return layout.cls(*values)

    def _dump(self, value: object) -> Place:
        start = self.buffer.tell()
        self.pickler.clear_memo()  # each pickle read alone
        self.pickler.dump(value)
        end = self.buffer.tell()
        place = self.flushed + start, end - start
        if end >= BUFFER_BYTES:
            self._flush()
        return place

    def _flush(self) -> None:
        self.file.write(self.buffer.getvalue())
        self.unsynced = True
        self.flushed += self.buffer.tell()
        self.buffer.seek(0)
        self.buffer.truncate()

    def _load(self, offset: int, length: int) -> Any:
        if self.buffer.tell():
            self._flush()
        if self.unsynced:
            self.file.flush()
            self.unsynced = False
        # One system call: a seek would drop the file's buffer, then read.
        return pickle.loads(os.pread(self.fd, length, offset))  # noqa: S301 - our own temporary file

    def _call_places(self, call: ModelCall) -> tuple[tuple[Place, ...] | None, tuple[Place, ...] | None]:
        """Where a call's input and output messages sit: the history it resends where the last call of its trace
        placed it, each new message where it is written (or was, lately)."""
        sent, answered = call.input or (), call.output or ()
        shared, placed = self.resent.start(call.source.trace, sent)
        input_places = placed + self._places(sent[shared:])
        output_places = self._places(answered)
        self.resent.remember(call.source.trace, sent, answered, input_places + output_places)
        return (None if call.input is None else input_places), (None if call.output is None else output_places)

    def _places(self, messages: tuple[LLMMessage, ...]) -> tuple[Place, ...]:
        places = []
        for message in messages:
            known = self.recent.get(id(message))
            if known is None or known[0] is not message:
                if len(self.recent) >= RECENT_MESSAGES:
                    self.recent.clear()
                known = self.recent[id(message)] = message, self._dump(message)
            places.append(known[1])
        return tuple(places)

    def _request_place(self, request: StoredRequest | None) -> Place | None:
        if request is None:
            return None
        if self.last_request is None or self.last_request[0] != request:
            self.last_request = request, self._dump(request)
        return self.last_request[1]

    def _call_messages(
        self, trace: str | None, sent: tuple[Place, ...] | None, answered: tuple[Place, ...] | None, part: PartReads
    ) -> tuple[tuple[LLMMessage, ...] | None, tuple[LLMMessage, ...] | None]:
        """A call's input and output read back: the history it resends as the last call of its trace read it."""
        read = part.read
        shared, messages = part.resent.start(trace, sent or ())
        input_messages = messages + tuple(self._read_once(place, read) for place in (sent or ())[shared:])
        output_messages = tuple(self._read_once(place, read) for place in answered or ())
        part.resent.remember(trace, sent or (), answered or (), input_messages + output_messages)
        return (None if sent is None else input_messages), (None if answered is None else output_messages)

    def _read_once(self, place: Place, read: dict[Place, Any]) -> Any:
        """What sits at ``place``, read once per ``read`` (one part's messages and requests)."""
        found = read.get(place)
        if found is None:
            found = read[place] = self._load(*place)
        return found


@dataclass(slots=True)
class PartReads:
    """What the reads of one part share: each message and request read once (by its place), and per trace the
    last call's places and messages."""

    read: dict[Place, Any] = field(default_factory=dict)
    resent: Resent[Place, LLMMessage] = field(default_factory=Resent)


class HeldEvents:
    """Events a caller holds anyway (a live round's spans), kept as they are: spilling them would only copy them."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def write(self, event: Event) -> Place:
        self.events.append(event)
        return len(self.events) - 1, 0

    def written(self) -> None:
        """Nothing to let go: the events are the caller's."""

    def read(self, offset: int, length: int, part: PartReads) -> Event:
        return self.events[offset]


KeptEvents = SpilledEvents | HeldEvents
