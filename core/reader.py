"""Reading stored messages from JSON and JSONL, with limits and errors that say where.

This is the one reader behind ``check``, ``repair``, ``payload`` and ``import``.
It yields each top-level message twice over: the JSON object exactly as read
(``raw``: the store keeps it verbatim, so nothing the parser does not know is
lost) and the typed message parsed through the Message union. Bad input stops
the read with an InputError naming the source, the line and the JSON path; given
a ``BadMessages``, a read notes each bad message there and goes on to the next.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, TypedDict, Unpack

import orjson
from pydantic import ValidationError

from core.errors import InputError, InputErrors
from core.jsonio import loads
from core.messages.union import MESSAGE_ADAPTER, Message
from core.messages.user import UserMessage
from core.trace_stream import SplitMessage, split_trace

Format = Literal["json", "jsonl"]
MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """Bounds on what one read accepts; exceeding one is an InputError, never a hang or a crash.

    Nesting has one bound, the same for every command (``check``, ``import``, the dashboard):
    a message must be one the parser can write back (see ``_check_writable``). orjson's fixed limit of
    1024 levels keeps a 100,000-deep ``[[[[`` from reaching the validator at all.
    """

    max_file_bytes: int = 512 * MiB
    max_record_bytes: int = 32 * MiB


DEFAULT_LIMITS = ReadLimits()


@dataclass(frozen=True, slots=True)
class Record:
    """One top-level message as read: where it was, its JSON object verbatim, and its typed form."""

    source: str
    line: int | None
    index: int
    raw: dict[str, Any]
    message: Message


LONG_LINE_BYTES = 16 * MiB
"""A JSONL line at least this long is read a trace record at a time by the import (``StreamedRecord``)."""


@dataclass(frozen=True, slots=True)
class StreamedRecord(Record):
    """A message of a long line read without its trace's records (``raw`` and ``message`` hold an empty trace):
    ``records`` parses and checks each one as it is reached, with the errors a whole read gives."""

    split: SplitMessage

    def records(self) -> Iterator[tuple[Any, Message]]:
        """Each trace record's JSON value and typed message, in order; InputError naming the first bad one."""
        message = self.message
        assert isinstance(message, UserMessage)
        for i, text in enumerate(self.split.record_texts()):
            root = f"$.intermediate_trace.records[{i}]"
            value = _loads(text, self.source, self.line)
            record = _validated(value, self.source, self.line, root)
            if _containers(text) >= NESTING_GATE:  # the serialiser's depth counts from the top message
                trace = message.intermediate_trace.model_copy(update={"records": [record]})
                _check_writable(message.model_copy(update={"intermediate_trace": trace}), self.source, self.line, root)
            yield value, record


def _streamed_record(split: SplitMessage, source: str, line: int, index: int) -> StreamedRecord | None:
    """The message of a long line with its records apart, or None when it holds no trace (it is read whole)."""
    shell = _record(split.shell, source, line, index, "$", may_be_deep=True)
    if not isinstance(shell.message, UserMessage):
        return None
    return StreamedRecord(source=source, line=line, index=index, raw=shell.raw, message=shell.message, split=split)


STORE_LINE_PREFIX = "traceloupe_"
"""A JSONL line whose one key starts with this holds a stored record that is not a message (a run, a suite...):
what ``traceloupe export`` writes after the messages (``core.store.export_lines``). A reader given
``store_lines=`` sets such lines aside (the import stores them; ``check`` and ``payload`` skip them); any
other reader refuses them."""


@dataclass(frozen=True, slots=True)
class StoreLine:
    """A store line as read (``{"traceloupe_<kind>": {...}}``), for the import to check and store."""

    source: str
    line: int
    path: str
    value: dict[str, Any]

    @property
    def key(self) -> str:
        """The line's one key, ``traceloupe_<kind>``."""
        return next(iter(self.value))


def store_line_key(value: Any) -> str | None:
    """The key of a store line (``traceloupe_<kind>``), None when ``value`` is not one."""
    if type(value) is dict and len(value) == 1:
        key = next(iter(value))
        if isinstance(key, str) and key.startswith(STORE_LINE_PREFIX):
            return key
    return None


MAX_BAD_MESSAGES = 100
"""Bad messages a read notes before it stops: enough to see what is wrong with a file, not a screenful per line."""


class BadMessages:
    """The errors of a read that goes on past a bad message (``import`` reports every bad line of a file)."""

    def __init__(self) -> None:
        self.errors: list[InputError] = []

    def note(self, error: InputError) -> None:
        """Keep ``error`` and go on; InputErrors once MAX_BAD_MESSAGES are kept."""
        self.errors.append(error)
        if len(self.errors) >= MAX_BAD_MESSAGES:
            raise InputErrors(self.errors, stopped=True)

    def check(self) -> None:
        """Raise what was noted: the one InputError, or InputErrors for several."""
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise InputErrors(self.errors)


def _note(bad: BadMessages | None, error: InputError) -> None:
    if bad is None:
        raise error
    bad.note(error)


def detect_format(name: str, head: bytes) -> Format:
    """``.jsonl``/``.ndjson`` are JSONL, ``.json`` is JSON; otherwise a leading ``[`` means JSON."""
    lower = name.lower()
    if lower.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if lower.endswith(".json"):
        return "json"
    return "json" if head.lstrip()[:1] == b"[" else "jsonl"


class HowToRead(TypedDict, total=False):
    """What :func:`read_stream` takes besides the stream and its source (its defaults apply)."""

    fmt: Format | None
    limits: ReadLimits
    store_lines: list[StoreLine] | None
    bad: BadMessages | None
    streamed: bool


def read_path(path: str | Path, **how: Unpack[HowToRead]) -> Iterator[Record]:
    """Read messages from a file, or from standard input when ``path`` is ``-``."""
    name = str(path)
    if name == "-":
        yield from read_stream(sys.stdin.buffer, source="<stdin>", **how)
        return
    try:
        handle = Path(path).open("rb")  # noqa: SIM115 - closed below; the generator owns it
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}", source=name) from None
    with handle:
        yield from read_stream(handle, source=name, **how)


def read_bytes(data: bytes, *, source: str = "<input>", **how: Unpack[HowToRead]) -> Iterator[Record]:
    """Read messages from bytes already in memory (an upload, a test)."""
    yield from read_stream(io.BytesIO(data), source=source, **how)


def read_stream(
    stream: IO[bytes],
    *,
    source: str,
    fmt: Format | None = None,
    limits: ReadLimits = DEFAULT_LIMITS,
    store_lines: list[StoreLine] | None = None,
    bad: BadMessages | None = None,
    streamed: bool = False,
) -> Iterator[Record]:
    """Read messages from a binary stream; the format is detected from the name and first bytes.

    With ``store_lines``, JSONL store lines (``STORE_LINE_PREFIX``) are appended there instead of being refused.
    With ``bad``, a bad message (a JSONL line, an item of a JSON array) is noted there and skipped.
    With ``streamed`` (the import), a JSONL line of at least ``LONG_LINE_BYTES`` whose message holds a trace is
    yielded as a ``StreamedRecord``: its records are parsed and checked as its consumer reads them.
    """
    head = _peek(stream)
    if head.startswith(b"\xef\xbb\xbf"):
        stream.read(3)
        head = head[3:]
    chosen = fmt or detect_format(source, head)
    if chosen == "jsonl":
        yield from _read_jsonl(stream, source, limits, store_lines, bad, streamed)
    else:
        yield from _read_json(stream, source, limits, bad)


def _peek(stream: IO[bytes]) -> bytes:
    peek = getattr(stream, "peek", None)
    if peek is not None:
        data: bytes = peek(64)[:64]
        return data
    pos = stream.tell()
    data = stream.read(64)
    stream.seek(pos)
    return data


def _read_line(stream: IO[bytes], limit: int) -> bytes:
    """``stream.readline(limit)`` without its peak of twice a long line (it joins the pieces it read): a long line of
    a seekable stream (a file) is measured first, then read in one piece of its size."""
    if limit <= MiB or not stream.seekable():
        return stream.readline(limit)
    line = stream.readline(MiB)
    if len(line) < MiB or line.endswith(b"\n"):
        return line
    start = stream.tell() - len(line)
    size = len(line)
    del line
    while size < limit:
        piece = stream.read(min(MiB, limit - size))
        newline = piece.find(b"\n")
        if newline >= 0:
            size += newline + 1
            break
        if not piece:
            break
        size += len(piece)
    stream.seek(start)
    return stream.read(size)


def _read_jsonl(
    stream: IO[bytes],
    source: str,
    limits: ReadLimits,
    store_lines: list[StoreLine] | None,
    bad: BadMessages | None,
    streamed: bool = False,
) -> Iterator[Record]:
    index = 0
    line_no = 0
    while True:
        line = _read_line(stream, limits.max_record_bytes + 1)
        if not line:
            return
        line_no += 1
        if len(line) > limits.max_record_bytes and not line.endswith(b"\n"):
            _note(
                bad,
                InputError(
                    f"line is longer than the {_size(limits.max_record_bytes)} record limit (max_record_bytes)",
                    source=source,
                    line=line_no,
                ),
            )
            while line and not line.endswith(b"\n"):  # the rest of the long line, a bounded read at a time
                line = stream.readline(limits.max_record_bytes + 1)
            continue
        if line.isspace():  # not strip(): that would copy a long line
            continue
        split = split_trace(line) if streamed and len(line) >= LONG_LINE_BYTES else None
        if split is not None:
            try:
                found = _streamed_record(split, source, line_no, index)
            except InputError as error:
                _note(bad, error)
                continue
            if found is not None:  # a message with a trace: nothing of the line kept here while it is stored
                handed: list[Record] = [found]
                del line, split, found
                yield handed.pop()
                index += 1
                continue
            del split
        try:
            value = _loads(line, source, line_no)
            may_be_deep = _containers(line) >= NESTING_GATE
            del line  # the text is read: not kept while its message is validated (a long trace's is hundreds of MB)
            key = store_line_key(value)
            if key is not None:
                if store_lines is None:
                    raise InputError(
                        f"a {key} line of an export, not a message: this command reads messages only",
                        source=source,
                        line=line_no,
                        path="$",
                    )
                store_lines.append(StoreLine(source=source, line=line_no, path="$", value=value))
                continue
            record = _record(value, source, line_no, index, "$", may_be_deep=may_be_deep)
        except InputError as error:
            _note(bad, error)
            continue
        # Nothing of a line (which can be hundreds of MB) stays in this frame while the consumer stores it.
        handed = [record]
        del value, record
        yield handed.pop()
        index += 1


def _read_json(stream: IO[bytes], source: str, limits: ReadLimits, bad: BadMessages | None) -> Iterator[Record]:
    data = stream.read(limits.max_file_bytes + 1)
    if len(data) > limits.max_file_bytes:
        raise InputError(
            f"file is larger than the {_size(limits.max_file_bytes)} limit (max_file_bytes)", source=source
        )
    if not data.strip():
        raise InputError("file is empty: expected a message object or an array of them", source=source)
    value = _loads(data, source, None)
    deep = _containers(data) >= NESTING_GATE
    del data
    if isinstance(value, dict):
        handed = [_record(value, source, 1, 0, "$", may_be_deep=deep)]
        del value
        yield handed.pop()
        return
    if not isinstance(value, list):
        raise InputError(f"expected a message object or an array of them, found {_json_type(value)}", source=source)
    for index in range(len(value)):
        item, value[index] = value[index], None  # the array lets go of each message once it is read
        try:
            record = _record(item, source, None, index, f"$[{index}]", may_be_deep=deep)
        except InputError as error:
            _note(bad, error)
            continue
        handed = [record]  # as in _read_jsonl: no reference left here while the consumer stores it
        del item, record
        yield handed.pop()


def _loads(data: bytes, source: str, line: int | None) -> Any:
    try:
        return loads(data)  # integers past 64 bits stay exact
    except orjson.JSONDecodeError as exc:
        reason = str(exc)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            reason = f"not valid UTF-8 (byte {bad.start} of the {'line' if line else 'file'})"
        else:
            reason = f"not valid JSON: {reason}"
        raise InputError(reason, source=source, line=line) from None


def _containers(data: bytes) -> int:
    """An upper bound on the JSON containers in ``data`` (brackets inside strings count too): C-speed."""
    return data.count(b"[") + data.count(b"{")


def _record(value: Any, source: str, line: int | None, index: int, root: str, *, may_be_deep: bool) -> Record:
    if not isinstance(value, dict):
        raise InputError(f"expected a message object, found {_json_type(value)}", source=source, line=line, path=root)
    message = _validated(value, source, line, root)
    if may_be_deep:
        _check_writable(message, source, line, root)
    return Record(source=source, line=line, index=index, raw=value, message=message)


def _validated(value: Any, source: str, line: int | None, root: str) -> Message:
    """``value`` (the JSON at ``root``) as a typed message, or InputError naming where it is not one."""
    try:
        return MESSAGE_ADAPTER.validate_python(value)
    except ValidationError as exc:
        path, reason = describe_validation_error(exc, value, root)
        raise InputError(reason, source=source, line=line, path=path) from None
    except RecursionError:
        raise InputError("messages are nested too deeply to read", source=source, line=line, path=root) from None


NESTING_GATE = 64
"""A record with fewer JSON containers than this cannot reach the serialiser's depth (a typed level is at
most a few of its levels), so it is not written back to check."""


def _check_writable(message: Message, source: str, line: int | None, root: str) -> None:
    """InputError when the parser cannot write the message back: it is nested too deeply for that.

    This is the one nesting limit. Pydantic's serialiser stops at 255 levels of its own, which is
    at most 255 levels of JSON (fewer where the levels are typed messages: about 62 nested traces or
    125 forwarded histories), below what the validator, orjson and the standard library's recursion
    take. A message it cannot write back could be neither stored nor shown nor sent, and Python's
    JSON fallback crashed past about 985 levels; so the reader refuses it, for every command alike.
    """
    try:
        MESSAGE_ADAPTER.dump_json(message)  # the text is not kept: the store writes what was read (``raw``)
    except ValueError as exc:  # PydanticSerializationError: "Maximum serialization depth exceeded"
        reason = str(exc).rsplit(": ", 1)[-1]
        raise InputError(
            f"messages are nested too deeply to store ({reason}: at most 255 levels, fewer for nested traces)",
            source=source,
            line=line,
            path=root,
        ) from None


def describe_validation_error(exc: ValidationError, value: Any, root: str = "$") -> tuple[str, str]:
    """The JSON path and a one-line reason for the most specific error in ``exc``.

    Pydantic's ``loc`` mixes real keys with union branch names (``user``, ``ToolReturn``);
    walking it over the input keeps only the steps that exist in the JSON, so the path
    reads like the file (``$.intermediate_trace.records[2].msg_type``).
    """
    errors = exc.errors(include_url=False)
    # An unknown tag is the most useful thing to say; otherwise the deepest error is the most specific.
    tag_errors = [e for e in errors if e["type"] in ("union_tag_invalid", "union_tag_not_found")]
    best = tag_errors[0] if tag_errors else max(errors, key=lambda e: len(e["loc"]))
    path, node = locate(best["loc"], value, root, missing=best["type"] == "missing")
    reason = best["msg"]
    if best["type"] == "union_tag_invalid":
        key, reason = _unknown_tag(node, best.get("ctx", {}))
        path += f".{key}"
    elif best["type"] in ("recursion_loop", "recursion_depth_exceeded"):
        reason = "messages are nested too deeply to read (the validator's depth limit)"
    elif best["type"] == "union_tag_not_found":
        reason = "expected an object with a role (a message) or a type (a part)"
    if len(errors) > 1:
        reason += f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})"
    return path, reason


def locate(loc: tuple[int | str, ...], value: Any, root: str = "$", *, missing: bool = False) -> tuple[str, Any]:
    """Follow a pydantic error location over ``value``: the JSON path it names and the value found there.

    Union branch names are skipped. With ``missing`` the last step names a field absent from
    the input, so it is kept in the path.
    """
    path = root
    current = value
    for i, step in enumerate(loc):
        if isinstance(step, int) and isinstance(current, list) and 0 <= step < len(current):
            path += f"[{step}]"
            current = current[step]
        elif isinstance(step, str) and isinstance(current, dict) and step in current:
            path += f".{step}" if step.isidentifier() else f"[{step!r}]"
            current = current[step]
        elif missing and i == len(loc) - 1 and isinstance(step, str) and isinstance(current, dict):
            path += f".{step}"
    return path, current


def _unknown_tag(node: Any, ctx: dict[str, Any]) -> tuple[str, str]:
    """The key holding an unknown tag and a reason naming it in the file's own terms."""
    from core.messages.union import MESSAGE_TAGS

    # A role lookup failing means the role itself is wrong, whatever msg_type says.
    role_failed = ctx.get("discriminator") == "'role'"
    if not role_failed and isinstance(node, dict) and "role" in node and "msg_type" in node:
        role = node["role"]
        known = ", ".join(tag for tag in MESSAGE_TAGS if tag.startswith(f"{role}:"))
        return "msg_type", f"unknown message kind '{role}:{node['msg_type']}' (role:msg_type); known: {known}"
    key = "role" if role_failed else "type"
    return key, f"unknown {key} {ctx.get('tag', '?')!r}; expected one of: {ctx.get('expected_tags', '?')}"


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else "an object"


def _size(n: int) -> str:
    return f"{n // MiB} MiB" if n % MiB == 0 else f"{n:,} bytes"
