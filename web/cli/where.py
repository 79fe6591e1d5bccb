"""How the CLI names a record's place: ``file:line`` for JSONL, ``file`` plus ``$[i]`` for a JSON array."""

from __future__ import annotations

from collections import Counter

from core.reader import Record, StoreLine


def record_root(record: Record) -> str:
    """The JSON path of the record itself: ``$`` for a line or a single object, ``$[i]`` inside an array."""
    return "$" if record.line is not None else f"$[{record.index}]"


def where(record: Record) -> str:
    """``source:line`` when the record has a line, else the source alone."""
    return record.source if record.line is None else f"{record.source}:{record.line}"


def skipped_note(source: str, lines: list[StoreLine]) -> str:
    """The one note for an export's lines that are not messages (runs, suites...), which a reading command skips."""
    kinds = Counter(line.key for line in lines)
    listed = ", ".join(f"{n} {key}" for key, n in kinds.items())
    count = f"{len(lines)} line{'s' * (len(lines) != 1)}"
    return f"note: {source}: skipped {count} that hold other records, not messages ({listed}); read the messages only"
