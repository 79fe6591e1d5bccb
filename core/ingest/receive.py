"""One OTLP/HTTP trace export read as it arrives: its media type, its encoding, its spans, and the answer.

The OTLP specification (https://opentelemetry.io/docs/specs/otlp/#otlphttp) says what this follows: a body
is an ``ExportTraceServiceRequest`` in binary protobuf (``application/x-protobuf``) or its JSON mapping
(``application/json``), possibly gzipped (``Content-Encoding: gzip``); the answer is an
``ExportTraceServiceResponse`` in the request's encoding, whose ``partial_success`` counts the spans refused
and says why; a failure's body is a ``google.rpc.Status``. A span is refused here only when its ids are not
valid OTLP ids (16 and 8 bytes, not all zero): everything else is stored, and the assembly reads it.
"""

from __future__ import annotations

import io
import itertools
import zlib
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from core.errors import InputError
from core.formats.otlp import Span, protobuf_batches, read_spans, spans_of_batch

MediaType = Literal["application/json", "application/x-protobuf"]
MEDIA_TYPES: tuple[MediaType, ...] = ("application/json", "application/x-protobuf")

SOURCE = "OTLP /v1/traces"
"""What messages assembled from received spans name as their source."""

_INVALID_IDS = {"0" * 32, "0" * 16}
_HEX = frozenset("0123456789abcdef")


class BodyTooLarge(Exception):
    """The body, decompressed, is larger than the limit (a gzip bomb stops here, a chunk past the limit)."""


class UnsupportedEncoding(Exception):
    """A ``Content-Encoding`` other than gzip or identity."""


def media_type(content_type: str | None) -> MediaType | None:
    """The OTLP media type a ``Content-Type`` header names (parameters such as charset ignored), or None."""
    if content_type is None:
        return None
    base = content_type.split(";", 1)[0].strip().lower()
    for known in MEDIA_TYPES:
        if base == known:
            return known
    return None


def decompressed(body: bytes, encoding: str | None, limit: int) -> bytes:
    """The body without its ``Content-Encoding``; BodyTooLarge past ``limit`` bytes, read a chunk at a time."""
    name = (encoding or "identity").strip().lower()
    if name in ("", "identity"):
        if len(body) > limit:
            raise BodyTooLarge
        return body
    if name not in ("gzip", "x-gzip"):
        raise UnsupportedEncoding(name)
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    out = bytearray()
    try:
        out += inflater.decompress(body, limit + 1 - len(out))
        while inflater.unconsumed_tail and len(out) <= limit:
            out += inflater.decompress(inflater.unconsumed_tail, limit + 1 - len(out))
        if len(out) <= limit:
            out += inflater.flush()
    except zlib.error:
        raise InputError("the body is not valid gzip", source=SOURCE) from None
    if len(out) > limit:
        raise BodyTooLarge
    if not inflater.eof:
        raise InputError("the gzip stream ends early", source=SOURCE)
    return bytes(out)


def span_problem(span: Span) -> str | None:
    """Why a span cannot be stored (its ids are not OTLP ids), or None."""
    for name, value, width in (("trace_id", span.trace_id, 32), ("span_id", span.span_id, 16)):
        if len(value) != width or not _HEX.issuperset(value) or value in _INVALID_IDS:
            return f"{name} is not {width // 2} bytes, or is all zero"
    return None


@dataclass(slots=True)
class ReceivedBatch:
    """The spans of one request: each kept span's ``(position, trace_id, span_id)``, and why others were refused."""

    kept: list[tuple[int, str, str]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def error_message(self) -> str:
        """``partial_success.error_message``: the first refusals, named by position and reason."""
        shown = "; ".join(self.refused[:10])
        more = f"; and {len(self.refused) - 10} more" if len(self.refused) > 10 else ""
        return f"{len(self.refused)} span(s) refused: {shown}{more}"


def _json_document(body: bytes) -> dict[str, Any]:
    """An OTLP/JSON request body parsed and its containers checked; an empty body is an empty request."""
    try:
        document = orjson.loads(body) if body.strip() else {}
    except orjson.JSONDecodeError as error:
        raise InputError(f"not JSON: {error}", source=SOURCE) from None
    _check_json_shape(document)
    return document


def _check_json_shape(document: Any) -> None:
    """The JSON mapping's containers where OTLP puts them (unknown keys are ignored, as the mapping says)."""
    if not isinstance(document, dict):
        raise InputError("an OTLP/JSON request is a JSON object", source=SOURCE)
    batches = document.get("resourceSpans", document.get("resource_spans", []))
    if not isinstance(batches, list) or not all(isinstance(b, dict) for b in batches):
        raise InputError("resourceSpans is not a list of objects", source=SOURCE)
    for batch in batches:
        scopes = batch.get("scopeSpans", batch.get("scope_spans", []))
        if not isinstance(scopes, list) or not all(isinstance(s, dict) for s in scopes):
            raise InputError("scopeSpans is not a list of objects", source=SOURCE)
        for scope in scopes:
            spans = scope.get("spans", [])
            if not isinstance(spans, list) or not all(isinstance(s, dict) for s in spans):
                raise InputError("spans is not a list of objects", source=SOURCE)


def spans_of(
    body: bytes, media: MediaType, positions: Container[int] | None = None, *, bare: bool = False
) -> Iterator[Span]:
    """Every span of a request body (decompressed), or those at ``positions`` (the others are not read into
    spans); ``bare``: protobuf spans without their attributes. InputError when the body is not OTLP in that
    media type."""
    keep = None if positions is None else _at(positions)
    if media == "application/json":
        return _json_spans(_json_document(body), keep)
    if body.lstrip()[:1] == b"{":
        raise InputError("a JSON body sent as application/x-protobuf", source=SOURCE)
    return _read(body, keep, bare)


def _at(positions: Container[int]) -> Callable[[], bool]:
    """Asked once per span in order: whether the span at the next position is one of ``positions``."""
    counter = itertools.count()
    return lambda: next(counter) in positions


def _json_spans(document: dict[str, Any], keep: Callable[[], bool] | None) -> Iterator[Span]:
    for batch in document.get("resourceSpans", document.get("resource_spans", [])):
        yield from spans_of_batch(batch, None, keep)


def _read(body: bytes, keep: Callable[[], bool] | None, bare: bool) -> Iterator[Span]:
    try:
        yield from read_spans(io.BufferedReader(io.BytesIO(body)), SOURCE, keep, bare=bare)
    except InputError:
        raise
    except Exception as error:  # protobuf's DecodeError and its kin: the body is not a request
        reason = f"not an OTLP/protobuf ExportTraceServiceRequest ({type(error).__name__})"
        raise InputError(reason, source=SOURCE) from None


@dataclass(frozen=True, slots=True)
class ParsedBody:
    """A body parsed once (protobuf messages, or JSON batches), its spans read only when asked for."""

    media: MediaType
    batches: tuple[Any, ...]

    def spans(self, positions: Container[int] | None = None) -> Iterator[Span]:
        """Every span, or those at ``positions`` (the others not read into spans)."""
        from core.formats.otlp_protobuf import spans_of_message

        keep = None if positions is None else _at(positions)
        for batch in self.batches:
            if self.media == "application/json":
                yield from spans_of_batch(batch, None, keep)
            else:
                yield from spans_of_message(batch, keep)


def parsed(body: bytes, media: MediaType) -> ParsedBody:
    """A request body (decompressed) parsed; InputError when it is not OTLP in that media type."""
    if media == "application/json":
        document = _json_document(body)
        return ParsedBody(media, tuple(document.get("resourceSpans", document.get("resource_spans", []))))
    try:
        return ParsedBody(media, tuple(protobuf_batches(io.BufferedReader(io.BytesIO(body)), SOURCE)))
    except InputError:
        raise
    except Exception as error:  # protobuf's DecodeError and its kin: the body is not a request
        reason = f"not an OTLP/protobuf ExportTraceServiceRequest ({type(error).__name__})"
        raise InputError(reason, source=SOURCE) from None


def received(body: bytes, media: MediaType) -> ReceivedBatch:
    """The spans a request body holds, those kept and those refused; InputError when it is not OTLP."""
    batch = ReceivedBatch()
    for position, span in enumerate(spans_of(body, media, bare=True)):  # only the ids are checked here
        problem = span_problem(span)
        if problem is None:
            batch.kept.append((position, span.trace_id, span.span_id))
        else:
            batch.refused.append(f"span {position} ({span.name[:80]!r}): {problem}")
    return batch


def export_response(batch: ReceivedBatch, media: MediaType) -> bytes:
    """The ``ExportTraceServiceResponse`` body: empty of ``partial_success`` when every span was kept."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    response = ExportTraceServiceResponse()
    if batch.refused:
        response.partial_success.rejected_spans = len(batch.refused)
        response.partial_success.error_message = batch.error_message()
    if media == "application/json":
        return orjson.dumps(MessageToDict(response))
    return bytes(response.SerializeToString())


INVALID_ARGUMENT = 3
"""``google.rpc.Code.INVALID_ARGUMENT``."""


def status_body(code: int, message: str, media: MediaType | None) -> bytes:
    """A ``google.rpc.Status`` (code and message) in the request's encoding: JSON unless it sent protobuf."""
    if media != "application/x-protobuf":
        return orjson.dumps({"code": code, "message": message})
    text = message.encode()
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)
