"""Provider request/response logs read into model-call events: JSONL pairs and recorded-HTTP cassettes.

Two shapes, one function each, and a content sniff for each:

* **pairs**: a JSONL file, one ``{"request": BODY, "response": BODY}`` per line (``url`` optional, naming the
  endpoint; Gemini's model is in it);
* **cassettes**: VCR.py YAML (``interactions: [{request: {uri, body}, response: {status, body}}]``) as SDK and
  framework test suites keep them, with the body as text (``body: {string: ...}`` or ``body: ...``) or parsed
  (pydantic-ai's ``parsed_body``); the JSON flavour (``{"interactions": [...]}``) reads the same.

Which provider an exchange is, its dialect says (``Dialect.claims``: by URL, else by the bodies' shape); each
request is read back by that dialect (``read_request``) and each answer too (``read_response``). A call keys
nothing: the assembler merges calls whose input continues an earlier transcript. Exchanges that are not model
calls (a token count, a file upload) are skipped. A streamed answer (Server-Sent Events, or Gemini's JSON array of
chunks) is folded by its dialect (``Dialect.fold_stream``) into the answer its reader takes; a stream cut short
or holding a bad event is refused naming the event's line, and one that reports an error (the call failed) is not
captured, its error kept. A gzip-encoded body (VCR's ``!!binary``, or base64 text under ``Content-Encoding: gzip``)
is expanded, up to ``DECOMPRESSED_LIMIT``. An answer that is neither (another binary body) is reported
as not captured (``output`` None), never as an empty turn.
"""

from __future__ import annotations

import base64
import binascii
import io
import itertools
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import yaml  # type: ignore[import-untyped]

from core.errors import InputError
from core.formats.events import ConversationKey, ModelCall, SourceRef
from core.formats.streamed import fold_answer, looks_like_sse
from core.jsonio import loads
from core.providers.base import JSON, Dialect, ReadBody
from core.providers.registry import all_providers
from core.providers.streamed import StreamFailed
from core.request_context.shapes import RequestFieldError
from core.request_context.stored import StoredRequest

# libyaml's safe loader when PyYAML was built with it (several times faster), else the pure-Python one.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _PlainLoader(SAFE_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader, reading a Python-object tag as the plain data under it and never building the object:
    VCR.py with aiohttp writes header names as ``!!python/object/apply:multidict._multidict.istr [name]``."""


def _plain(loader: Any, suffix: str, node: Any) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        items = loader.construct_sequence(node, deep=True)
        return items[0] if len(items) == 1 else tuple(items)  # hashable: such nodes are mapping keys
    return loader.construct_mapping(node, deep=True)


_PlainLoader.add_multi_constructor("tag:yaml.org,2002:python/", _plain)
SNIFF_BYTES = 4096
"""How much of a file the sniffs look at."""
DECOMPRESSED_LIMIT = 64 << 20
"""The most a compressed recorded body may expand to: a larger one is refused, never read into memory whole."""
_GZIP_MAGIC = b"\x1f\x8b"


def sniff_pairs(head: bytes) -> bool:
    """Whether a file starts like a JSONL of request/response pairs: its first line an object with a
    ``request`` object that holds a model call's body."""
    first = head.lstrip().split(b"\n", 1)[0]
    try:
        line = loads(first)
    except ValueError:
        return False
    request = line.get("request") if isinstance(line, dict) else None
    return isinstance(request, dict) and any(k in request for k in ("messages", "input", "contents"))


def sniff_cassette(head: bytes) -> bool:
    """Whether a file starts like a VCR cassette: ``interactions`` (after VCR's ``version``), with a request."""
    text = head.lstrip()
    if text.startswith(b"{"):
        return b'"interactions"' in text[:200] and b'"request"' in text
    return (text.startswith(b"interactions:") or b"\ninteractions:" in text) and b"request:" in text


def read_pairs(path: Path, dialect: Dialect | None = None) -> Iterator[ModelCall]:
    """The model calls of a JSONL of ``{"request", "response"}`` pairs (``dialect`` None: each line's own)."""
    with path.open("rb") as handle:
        yield from _pairs(handle, str(path), dialect)


def _pairs(handle: Iterable[bytes], path: str, dialect: Dialect | None) -> Iterator[ModelCall]:
    for number, raw in enumerate(handle, start=1):
        if not raw.strip():
            continue
        try:
            line = loads(raw)
        except ValueError as exc:
            raise InputError(f"not JSON: {exc}", source=str(path), line=number) from None
        if not isinstance(line, dict) or not isinstance(line.get("request"), dict):
            raise InputError('expected {"request": {...}, "response": {...}}', source=str(path), line=number)
        response = line.get("response")
        url = line.get("url") if isinstance(line.get("url"), str) else None
        call = _call(SourceRef(str(path), line=number), url, line["request"], _answer(response), dialect)
        if call is None:
            raise InputError("no provider reads this request", source=str(path), line=number)
        yield call


def read_cassette(path: Path, dialect: Dialect | None = None) -> Iterator[ModelCall]:
    """The model calls of a VCR cassette (YAML or JSON), one per interaction that is one; the source names the
    interaction's index."""
    return _cassette(path.read_bytes(), str(path), dialect)


def _cassette(text: bytes, path: str, dialect: Dialect | None) -> Iterator[ModelCall]:
    try:
        # A safe loader (libyaml's or PyYAML's): plain data only, never an object a tag names.
        data = loads(text) if text.lstrip().startswith(b"{") else yaml.load(text, Loader=_PlainLoader)  # noqa: S506
    except (ValueError, yaml.YAMLError) as exc:
        raise InputError(f"not a cassette: {exc}", source=str(path)) from None
    interactions = data.get("interactions") if isinstance(data, dict) else None
    if not isinstance(interactions, list):
        raise InputError("not a cassette: no interactions list", source=str(path))
    for index, interaction in enumerate(interactions):
        source = SourceRef(str(path), source_id=f"interactions[{index}]")
        request = interaction.get("request") if isinstance(interaction, dict) else None
        if not isinstance(request, dict):
            raise InputError("an interaction without a request", source=str(path), path=source.source_id)
        response = interaction.get("response")
        if isinstance(response, dict) and not _ok(response):
            continue  # a request the provider refused: not a model call
        body = _body(request, source)
        if not isinstance(body, dict):
            continue  # a GET, a file upload: not a model call
        answer = _answer(_body(response, source, keep_text=True)) if isinstance(response, dict) else None
        uri = request.get("uri")
        call = _call(source, uri if isinstance(uri, str) else None, body, answer, dialect)
        if call is not None:
            yield call


def _ok(response: Mapping[str, Any]) -> bool:
    status = response.get("status")
    code = status.get("code") if isinstance(status, Mapping) else response.get("status_code")
    return code is None or (isinstance(code, int) and 200 <= code < 300)


def _encoding(message: Mapping[str, Any]) -> str:
    """The ``Content-Encoding`` a recorded message's headers name (lower case), or ""."""
    headers = message.get("headers")
    if not isinstance(headers, Mapping):
        return ""
    for name, value in headers.items():
        if isinstance(name, str) and name.lower() == "content-encoding":
            values = value if isinstance(value, list | tuple) else [value]
            return ",".join(str(v) for v in values).strip().lower()
    return ""


def _gunzip(data: bytes, where: SourceRef) -> bytes:
    """A gzip (or zlib) body expanded, refused when it would pass ``DECOMPRESSED_LIMIT``."""
    inflater = zlib.decompressobj(wbits=47)  # 32 + 15: a gzip or a zlib header, whichever is there
    try:
        out = inflater.decompress(data, DECOMPRESSED_LIMIT)
    except zlib.error as exc:
        reason = f"a gzip-encoded body that does not decompress: {exc}"
        raise InputError(reason, source=where.path, path=where.source_id) from None
    if inflater.unconsumed_tail:
        reason = f"a gzip-encoded body expands past {DECOMPRESSED_LIMIT >> 20} MiB: refused"
        raise InputError(reason, source=where.path, path=where.source_id)
    if not inflater.eof:
        raise InputError("a gzip-encoded body cut short", source=where.path, path=where.source_id)
    return out


def _compressed(body: bytes | str, encoding: str) -> bytes | None:
    """The gzip bytes of a recorded body, when it is one: binary (VCR's ``!!binary``) starting with gzip's magic
    number, or, under ``Content-Encoding: gzip``, base64 text of them; None for any other body."""
    if isinstance(body, bytes):
        return body if body.startswith(_GZIP_MAGIC) else None
    if "gzip" not in encoding and "deflate" not in encoding:
        return None
    try:
        raw = base64.b64decode("".join(body.split()), validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if raw.startswith(_GZIP_MAGIC) or "deflate" in encoding else None


def _body(message: Mapping[str, Any], where: SourceRef, keep_text: bool = False) -> Any:
    """A recorded request's or answer's body as JSON: parsed already, or the text VCR kept (None when it is not
    JSON: a multipart upload; its text with ``keep_text``, as a streamed answer is). A gzip-encoded body (a
    cassette recorded without asking for plain answers) is expanded first."""
    if "parsed_body" in message:
        return message["parsed_body"]
    body = message.get("body", message.get("content"))  # ``content``: pytest-recording's httpx cassettes
    if isinstance(body, Mapping):
        body = body.get("string")
    if isinstance(body, bytes | str):
        packed = _compressed(body, _encoding(message))
        if packed is not None:
            body = _gunzip(packed, where)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str) or not body.strip():
        return None
    try:
        return loads(body)
    except ValueError:
        return body if keep_text else None


Answer = JSON | list[Any] | str
"""A recorded answer: one JSON object, or a stream (event-stream text, or a JSON array of chunks)."""


def _answer(value: Any) -> Answer | None:
    """A recorded answer as read (None when it is none: absent, binary, not an event stream)."""
    if isinstance(value, dict | list):
        return value
    return value if isinstance(value, str) and looks_like_sse(value) else None


def dialect_of(url: str | None, request: JSON, response: JSON | None) -> Dialect | None:
    """The provider that claims an exchange most surely (its host, else its path or shape); None when none does."""
    best: tuple[int, Dialect | None] = (0, None)
    for dialect in all_providers():
        strength = dialect.claims(url, request, response)
        if strength > best[0]:
            best = (strength, dialect)
    return best[1]


def _call(
    source: SourceRef, url: str | None, request: JSON, recorded: Answer | None, given: Dialect | None
) -> ModelCall | None:
    # The dialect asked for reads what it claims; an exchange another provider claims (a cassette passing a
    # history between providers) is read by that one rather than misread or dropped.
    response = recorded if isinstance(recorded, dict) else None
    claimed = given is not None and given.claims(url, request, response) > 0
    dialect = given if claimed else dialect_of(url, request, response) or given
    if dialect is None:
        return None
    where = source.source_id
    try:
        read = dialect.read_request(request)
    except RequestFieldError as exc:
        raise InputError(exc.reason, source=source.path, line=source.line, path=_at(where, "request", exc)) from None
    model = read.model or (dialect.model_of(url) if url else None)
    output: tuple[Any, ...] | None = None
    extra: JSON = {"request": read.extra} if read.extra else {}
    if recorded is not None:
        try:
            body = recorded if isinstance(recorded, dict) else fold_answer(dialect, recorded)
            answer: ReadBody = dialect.read_response(body)
        except StreamFailed as exc:  # the call failed mid-stream: its answer is not captured, and why is kept
            extra["response"] = {"stream_error": exc.error, "stream_error_at": exc.reason}
        except RequestFieldError as exc:
            raise InputError(
                exc.reason, source=source.path, line=source.line, path=_at(where, "response", exc)
            ) from None
        else:
            output = answer.messages
            if answer.extra:
                extra["response"] = answer.extra
    params = read.params
    stored = StoredRequest(
        conversation_id=f"{source.path}#{where or source.line}",
        provider=dialect.name,
        model=model,
        tools=read.tools,
        tool_choice=read.tool_choice,
        params=params,
    )
    if url is not None:
        extra["url"] = url
    return ModelCall(
        source=source,
        key=ConversationKey(),
        input=read.messages,
        output=output,
        request=stored,
        recorded_body=request,
        extra=extra,
    )


def _at(where: str | None, side: str, exc: RequestFieldError) -> str:
    return ".".join(part for part in (where, side, exc.field) if part)


def read_log(stream: IO[bytes], path: str, dialect: Dialect | None = None) -> Iterator[ModelCall]:
    """The model calls of an open provider log, pairs or cassette as its content says (``--from`` reader);
    ``dialect`` None reads each exchange as the provider that claims it."""
    head = stream.read(SNIFF_BYTES)
    if sniff_cassette(head):
        yield from _cassette(head + stream.read(), path, dialect)
    elif sniff_pairs(head):
        # The head may end inside a line: finish that line, then read the rest from the stream a line at a time.
        yield from _pairs(itertools.chain(io.BytesIO(head + stream.readline()), stream), path, dialect)
    else:
        raise InputError("neither a JSONL of request/response pairs nor a VCR cassette", source=path)


def calls_of(paths: Sequence[Path]) -> Iterator[ModelCall]:
    """The model calls of every file, each read as its content says (pairs or cassette); InputError for a file
    that is neither."""
    for path in paths:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
        if sniff_cassette(head):
            yield from read_cassette(path)
        elif sniff_pairs(head):
            yield from read_pairs(path)
        else:
            raise InputError("neither a JSONL of request/response pairs nor a VCR cassette", source=str(path))
