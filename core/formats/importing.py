"""A foreign file made ready for the store's one import path: the records and request-context lines it gives.

The store imports these exactly as it imports our own files (``Store.import_records``): in one transaction,
a message stored already as it is skipped, a different one under the same id refused with the file, the
line and the id. Nothing here writes to the store.
"""

from __future__ import annotations

import pickle
import tempfile
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, overload

from pydantic import ValidationError

from core.errors import InputError
from core.formats.assemble import ImportNote
from core.formats.events import Event
from core.formats.records import AssembledConversation, Assembly, assembled
from core.formats.registry import TraceFormat
from core.messages.union import MESSAGE_ADAPTER
from core.reader import Record, StoreLine, describe_validation_error
from core.request_context.stored import request_json

SPILL_AFTER = 1 << 20
"""Bytes of store lines held in memory before they go to a temporary file."""


class SpilledLines(Sequence[StoreLine]):
    """Store lines (a file's request contexts) written to a temporary file as they come, read back in order when
    the store takes them: held while a file is read, one per conversation, they would grow with the file."""

    def __init__(self) -> None:
        self.file = tempfile.SpooledTemporaryFile(max_size=SPILL_AFTER)  # noqa: SIM115 - closed with this object
        weakref.finalize(self, self.file.close)
        self.size = 0

    def append(self, line: StoreLine) -> None:
        self.file.seek(0, 2)
        pickle.dump(line, self.file, protocol=pickle.HIGHEST_PROTOCOL)
        self.size += 1

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[StoreLine]:
        position = 0
        for _ in range(self.size):
            self.file.seek(position)
            line: StoreLine = pickle.load(self.file)  # noqa: S301 - our own temporary file
            position = self.file.tell()
            yield line

    @overload
    def __getitem__(self, index: int) -> StoreLine: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[StoreLine]: ...
    def __getitem__(self, index: int | slice) -> StoreLine | Sequence[StoreLine]:
        return list(self)[index]


@dataclass(slots=True)
class ForeignFile:
    """What one foreign file gives the store, and what the import must tell its user.

    ``records`` is read as the store takes it (the file is read and assembled on its first record);
    ``store_lines`` and ``notes`` are complete once ``records`` is exhausted.
    """

    records: Iterator[Record]
    store_lines: SpilledLines = field(default_factory=SpilledLines)
    notes: list[ImportNote] = field(default_factory=list)


def _records(
    conversations: Iterable[AssembledConversation], assembly: Assembly, out: ForeignFile, source: str
) -> Iterator[Record]:
    index = 0
    for conversation in conversations:
        line = conversation.source.line
        for raw in conversation.messages:
            try:
                message = MESSAGE_ADAPTER.validate_python(raw)
            except ValidationError as exc:  # a reader's bug, not the file's: still named by file, line and id
                path, reason = describe_validation_error(exc, raw)
                raise InputError(
                    f"{reason} (msg_id {raw.get('msg_id')})", source=source, line=line, path=path
                ) from None
            yield Record(source=source, line=line, index=index, raw=raw, message=message)
            index += 1
        for request, where in assembly.requests:
            value = {"traceloupe_request": request_json(request)}
            out.store_lines.append(StoreLine(source=source, line=where.line or 0, path="$", value=value))
        assembly.requests.clear()


def stream_foreign(trace_format: TraceFormat, stream: IO[bytes], source: str) -> ForeignFile:
    """A foreign file's records, made as the store takes them (``stream`` must stay open until then)."""
    assert trace_format.read is not None, "our own format is read by core.reader"
    return foreign_events(trace_format.read(stream, source), source)


def foreign_events(events: Iterable[Event], source: str, *, spill: bool = True) -> ForeignFile:
    """The records the events make (read as the store takes them), as a file of them would give; without
    ``spill``, events the caller holds in memory are assembled there (``core.formats.parts``)."""
    assembly = Assembly()
    out = ForeignFile(iter(()), notes=assembly.notes)
    out.records = _records(assembled(events, assembly, spill=spill), assembly, out, source)
    return out


def read_foreign(trace_format: TraceFormat, stream: IO[bytes], source: str) -> tuple[list[Record], ForeignFile]:
    """A foreign file read whole: its records, and the file's store lines and notes."""
    foreign = stream_foreign(trace_format, stream, source)
    return list(foreign.records), foreign
