"""How the CLI names a record's place: ``file:line`` for JSONL, ``file`` plus ``$[i]`` for a JSON array."""

from __future__ import annotations

from core.reader import Record


def record_root(record: Record) -> str:
    """The JSON path of the record itself: ``$`` for a line or a single object, ``$[i]`` inside an array."""
    return "$" if record.line is not None else f"$[{record.index}]"


def where(record: Record) -> str:
    """``source:line`` when the record has a line, else the source alone."""
    return record.source if record.line is None else f"{record.source}:{record.line}"
