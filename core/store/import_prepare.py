"""Each message of an import made ready to store as it is read: validated, its row derived (figures, search text,
serialised JSON and outline), its limits checked. No database work: ``core.store.importer`` writes the rows."""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from core.errors import InputError
from core.jsonio import loads
from core.messages.union import Message
from core.messages.user import UserMessage
from core.reader import BadMessages, Record, StreamedRecord
from core.store.derive import Figures, FigureTally, children, derived_msg_id, figures, title_of
from core.store.jsonio import dumps
from core.store.outline import OutlineNode, dump_streamed, dump_with_outline
from core.store.pg_search import Chunk, text_chunks
from core.store.search_pieces import SearchPieces
from core.store.spilled_body import SpilledBody
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
    search: SearchPieces | None = None
    """Its searchable text's pieces, the first of them ``row["search_text"]``: more than one for a long trace."""
    chunks: list[Chunk] | None = None
    """PostgreSQL: its search chunks with their grams (``core.store.pg_search``) when its text is one piece, made here
    so that the import's writer thread, which waits for the server, has only to number them."""

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
    # (its own rendering) in ``body`` and this text beside it, in ``message_texts``. A long line's text is
    # written to a temporary file as it is made (``core.store.spilled_body``).
    body: bytes | SpilledBody
    outline: OutlineNode | None
    try:
        if isinstance(record, StreamedRecord):
            body, outline, fig = _dump_streamed(record)
        else:
            body, outline = dump_with_outline(raw, message)
            fig = figures(message)
    except RecursionError:  # the reader's nesting limit keeps this out; a net, not a path
        raise InputError("nested too deeply to store", source=record.source, line=record.line, path="$") from None
    if postgres and body.find(b"\\u0000") >= 0:
        _refuse_nul_in(body, outline, record)
    raw_id = raw.get("msg_id")
    if isinstance(raw_id, str):
        msg_id = raw_id
    else:  # ``raw`` of a streamed record holds no records: the id is of the message whole, as its text has it
        msg_id = derived_msg_id(loads(body.read()) if isinstance(body, SpilledBody) else raw)
    # SQLite stores a str as TEXT (a plain str, not RawJSON: a str subclass is a copy of the decoded text).
    # PostgreSQL takes the bytes as they are, for the JSONB column and for ``message_texts``: no decoded copy.
    # Either way the rows go to the driver as they are (``core.store.bulk``), never through a JSON serialiser.
    text: str | bytes | SpilledBody = body.decode() if isinstance(body, bytes) and not postgres else body
    del body  # a large message's text is held once, as the row's
    _check_id_length("msg_id", msg_id, record)
    _check_id_length("conversation_id", message.conversation_id, record)
    if not (message.create_ts >= _MIN_BIGINT and fig.last_ts <= _MAX_BIGINT):
        raise InputError(
            "create_ts is outside the 64-bit range of a millisecond timestamp",
            source=record.source,
            line=record.line,
            path="$.create_ts",
        )
    msg_type = getattr(message, "msg_type", None)
    pieces = fig.search_pieces
    pieces.drop_nul = postgres
    search_text = pieces.first.replace("\x00", "") if postgres else pieces.first
    row = {
        "msg_id": msg_id,
        "role": message.role,
        "msg_type": msg_type if isinstance(msg_type, str) else None,
        "kind": message.tag,
        "create_ts": message.create_ts,
        "records": fig.records,
        "damaged": fig.damaged,
        "body": text,
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
        search=pieces,
        chunks=text_chunks(search_text) if postgres and len(pieces) == 1 else None,
    )


def _check_id_length(key: str, value: str, record: Record) -> None:
    if len(value) > MAX_ID_CHARS:
        raise InputError(
            f"{key} is {len(value):,} characters long; ids are at most {MAX_ID_CHARS} characters",
            source=record.source,
            line=record.line,
            path=f"$.{key}",
        )


def _dump_streamed(record: StreamedRecord) -> tuple[SpilledBody, OutlineNode, Figures]:
    """The text, outline and figures of a message whose trace's records are read one at a time (``core.reader``)."""
    message = record.message
    assert isinstance(message, UserMessage)
    tally = FigureTally()
    tally.add(message, alone=True)  # then its records, then its message-list content: the order of ``walk``

    def counted() -> Iterator[tuple[Any, Message]]:
        for raw, nested in record.records():
            tally.add(nested)
            yield raw, nested

    body = SpilledBody()
    outline = dump_streamed(record.raw, message, counted(), body.file)
    for nested in children(message):
        tally.add(nested)
    return body, outline, tally.figures()


def _refuse_nul_in(body: bytes | SpilledBody, outline: OutlineNode | None, record: Record) -> None:
    """Refuse the message whose text ``body`` may escape U+0000 (an escaped backslash before ``u0000`` may look
    the same), naming where; a streamed record's ``raw`` holds no records, so they are read again from their spans."""
    if isinstance(record, StreamedRecord) and outline is not None and len(outline) > 7:
        spans = outline[8]
        at = body.find(b"\\u0000")
        while at >= 0:
            i = bisect.bisect_right(spans, at, key=lambda child: child[0]) - 1
            if i >= 0 and at < spans[i][1]:
                _refuse_nul(loads(body[spans[i][0] : spans[i][1]]), record, f"$.intermediate_trace.records[{i}]")
            at = body.find(b"\\u0000", at + 1)
    _refuse_nul(record.raw, record, "$")


def _refuse_nul(raw: Any, record: Record, root: str) -> None:
    stack: list[tuple[Any, str]] = [(raw, root)]
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
