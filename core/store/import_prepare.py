"""Each message of an import made ready to store as it is read: validated, its row derived (figures, search text,
serialised JSON and outline), its limits checked. No database work: ``core.store.importer`` writes the rows."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from core.errors import InputError
from core.messages.union import MESSAGE_ADAPTER
from core.reader import BadMessages, Record
from core.store.derive import derived_msg_id, figures, title_of
from core.store.jsonio import RawJSON, dumps
from core.store.outline import dump_with_outline
from core.store.tables import MAX_ID_CHARS
from core.store.versions import Identity

_MAX_BIGINT = 2**63 - 1
_MIN_BIGINT = -(2**63)


@dataclass(slots=True)
class PreparedMessage:
    """One message ready to store: its row values and what it adds to its conversation."""

    conversation_id: str
    row: dict[str, Any]
    kinds: frozenset[str]
    last_ts: int
    title: str | None
    outline: str | None = None
    """Where its trace records sit in ``row["body"]`` (``core.store.outline``)."""
    root: str = "$"
    """Its JSON path in the file: ``$`` on its own line, ``$[i]`` in an array."""

    @property
    def identity(self) -> Identity:
        return (self.conversation_id, self.row["msg_id"])

    @property
    def place(self) -> str:
        """Where it is in its file, for an error that points at it from elsewhere."""
        return f"line {self.row['line']}" if self.row["line"] is not None else self.root


def prepared_messages(
    records: Iterable[Record], *, postgres: bool = False, bad: BadMessages | None = None
) -> Iterator[PreparedMessage]:
    """Validate and derive the row of each message as it is read; raises InputError (naming file and line) on bad
    input.

    With ``bad`` (the reader's), a message that cannot be stored is noted there and the others are
    still prepared, so that every bad line of the file is reported at once. PostgreSQL's JSONB cannot
    hold U+0000, so with ``postgres`` a string containing it is refused here, as bad input, rather than
    failing the transaction later.
    """
    now = time.time_ns() // 1_000_000
    for record in records:
        try:
            prepared = _prepare(record, postgres, now)
        except InputError as error:
            if bad is None:
                raise
            bad.note(error)
            continue
        del record  # the parsed message is garbage once its row is made: only the row stays for the batch
        yield prepared


def _prepare(record: Record, postgres: bool, now: int) -> PreparedMessage:
    message = record.message
    raw = record.raw
    # The text and its outline's byte spans: SQLite stores the text as ``body``; PostgreSQL keeps JSONB
    # (its own rendering) in ``body`` and this text beside it, in ``message_texts``.
    try:
        body, outline = dump_with_outline(raw, message)
    except RecursionError:  # the reader's nesting limit keeps this out; a net, not a path
        raise InputError("nested too deeply to store", source=record.source, line=record.line, path="$") from None
    if postgres and b"\\u0000" in body:
        _refuse_nul(raw, record)
    written = _parsed_json(record)
    text = RawJSON(body.decode())
    # What the parser made of it is most often the text itself: then one object stands for both.
    parsed = text if written == body else RawJSON(written.decode())
    del body, written  # a large message's text is held once, as the row's
    raw_id = raw.get("msg_id")
    msg_id = raw_id if isinstance(raw_id, str) else derived_msg_id(raw)
    _check_id_length("msg_id", msg_id, record)
    _check_id_length("conversation_id", message.conversation_id, record)
    fig = figures(message)
    if not (message.create_ts >= _MIN_BIGINT and fig.last_ts <= _MAX_BIGINT):
        raise InputError(
            "create_ts is outside the 64-bit range of a millisecond timestamp",
            source=record.source,
            line=record.line,
            path="$.create_ts",
        )
    msg_type = getattr(message, "msg_type", None)
    search_text = fig.search_text.replace("\x00", "") if postgres else fig.search_text
    row = {
        "msg_id": msg_id,
        "role": message.role,
        "msg_type": msg_type if isinstance(msg_type, str) else None,
        "kind": message.tag,
        "create_ts": message.create_ts,
        "records": fig.records,
        "damaged": fig.damaged,
        "body": text,
        "parsed": parsed,
        "search_text": search_text,
        "source": record.source,
        "line": record.line,
        "imported_at": now,
    }
    return PreparedMessage(
        conversation_id=message.conversation_id,
        row=row,
        kinds=fig.kinds,
        last_ts=fig.last_ts,
        title=title_of(message),
        outline=None if outline is None else dumps(outline).decode(),
        root="$" if record.line is not None else f"$[{record.index}]",
    )


def _check_id_length(key: str, value: str, record: Record) -> None:
    if len(value) > MAX_ID_CHARS:
        raise InputError(
            f"{key} is {len(value):,} characters long; ids are at most {MAX_ID_CHARS} characters",
            source=record.source,
            line=record.line,
            path=f"$.{key}",
        )


def _parsed_json(record: Record) -> bytes:
    """What the parser made of a message, as JSON text (the reader's, when its nesting check wrote it)."""
    return record.written if record.written is not None else MESSAGE_ADAPTER.dump_json(record.message)


def _refuse_nul(raw: dict[str, Any], record: Record) -> None:
    stack: list[tuple[Any, str]] = [(raw, "$")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                raise InputError(
                    "contains U+0000, which PostgreSQL cannot store in JSONB",
                    source=record.source,
                    line=record.line,
                    path=path,
                )
        elif isinstance(value, dict):
            for key, item in value.items():
                if "\x00" in key:
                    raise InputError("a key contains U+0000", source=record.source, line=record.line, path=path)
                stack.append((item, f"{path}.{key}"))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(value))
