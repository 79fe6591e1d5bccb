"""A foreign file made ready for the store's one import path: the records and request-context lines it gives.

The store imports these exactly as it imports our own files (``Store.import_records``): in one transaction,
a message stored already as it is skipped, a different one under the same id refused with the file, the
line and the id. Nothing here writes to the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import IO

from pydantic import ValidationError

from core.errors import InputError
from core.formats.assemble import ImportNote
from core.formats.records import Assembly, assemble
from core.formats.registry import TraceFormat
from core.messages.union import MESSAGE_ADAPTER
from core.reader import Record, StoreLine, describe_validation_error
from core.request_context.stored import request_json


@dataclass(slots=True)
class ForeignFile:
    """What one foreign file gives the store, and what the import must tell its user."""

    records: list[Record] = field(default_factory=list)
    store_lines: list[StoreLine] = field(default_factory=list)
    notes: list[ImportNote] = field(default_factory=list)
    conversations: int = 0


def records_of(assembly: Assembly, source: str) -> ForeignFile:
    """The assembled conversations as reader records, and their request contexts as store lines."""
    out = ForeignFile(notes=assembly.notes, conversations=len(assembly.conversations))
    index = 0
    for conversation in assembly.conversations:
        for raw in conversation.messages:
            line = conversation.source.line
            try:
                message = MESSAGE_ADAPTER.validate_python(raw)
            except ValidationError as exc:  # a reader's bug, not the file's: still named by file, line and id
                path, reason = describe_validation_error(exc, raw)
                raise InputError(
                    f"{reason} (msg_id {raw.get('msg_id')})", source=source, line=line, path=path
                ) from None
            out.records.append(Record(source=source, line=line, index=index, raw=raw, message=message))
            index += 1
    for request, where in assembly.requests:
        out.store_lines.append(
            StoreLine(
                source=source, line=where.line or 0, path="$", value={"traceloupe_request": request_json(request)}
            )
        )
    return out


def read_foreign(trace_format: TraceFormat, stream: IO[bytes], source: str) -> ForeignFile:
    """A foreign file read, assembled and made into records (``trace_format`` has a reader)."""
    assert trace_format.read is not None, "our own format is read by core.reader"
    return records_of(assemble(trace_format.read(stream, source)), source)
