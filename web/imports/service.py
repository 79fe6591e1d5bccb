"""Uploaded trace files into the store, with exactly the rules and the lines of ``traceloupe import``.

Each file is read with ``core.reader`` (the same limits, the same errors naming the
file, the line and the JSON path) and stored all-or-nothing by the store; a message
already stored (same msg_id) is skipped, so importing a file again changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO

from core.errors import InputError
from core.reader import BadMessages, MiB, ReadLimits, Record, StoreLine, read_stream
from core.store import ImportSummary
from web.imports.pages import ImportResult
from web.source import StoreSource

MAX_LISTED = 20
"""Conversations linked from one file's result; the rest are counted."""

_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f/\\]")


def upload_name(filename: str | None) -> str:
    """The name a file is known by in messages and in the store: its last path component, one line, bounded."""
    name = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = _UNSAFE_NAME.sub("_", name).strip()[:200]
    return name or "<upload>"


def limits_for(max_bytes: int) -> ReadLimits:
    """The reader's limits under the route's body limit: a file no larger, a JSONL line at most 32 MiB."""
    return ReadLimits(max_file_bytes=max_bytes, max_record_bytes=min(max_bytes, 32 * MiB))


def import_stream(
    source: StoreSource,
    stream: IO[bytes],
    filename: str | None,
    limits: ReadLimits,
    digest_min_records: int | None = None,
) -> ImportResult:
    """Import one uploaded file; the result holds the CLI's summary line or its error line, and the conversations
    changed that hold at least ``digest_min_records`` records."""
    name = upload_name(filename)
    seen: dict[str, None] = {}
    lines: list[StoreLine] = []
    bad = BadMessages()

    def records() -> Iterator[Record]:
        for record in read_stream(stream, source=name, limits=limits, store_lines=lines, bad=bad, streamed=True):
            seen.setdefault(record.message.conversation_id, None)
            handed = [record]  # no reference kept here while the store writes it (``core.reader``)
            del record
            yield handed.pop()

    try:
        summary = source.import_records(
            records(), source=name, store_lines=lines, bad=bad, digest_min_records=digest_min_records
        )
    except InputError as exc:
        return ImportResult(filename=name, ok=False, line=ImportSummary.failure_line(exc))
    ids = list(seen)
    return ImportResult(
        filename=name,
        ok=True,
        line=summary.line(),
        imported=summary.imported,
        conversations=ids[:MAX_LISTED],
        more_conversations=max(0, len(ids) - MAX_LISTED),
        digest_due=summary.digest_due,
    )
