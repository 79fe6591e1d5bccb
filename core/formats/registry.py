"""Every format ``traceloupe import --from`` reads: its name, how it is recognised, and its reader.

A format is one line of ``FORMATS``: a reader turns a byte stream into the neutral events of
``core.formats.events`` (the assembler does the rest), and ``sniff`` says, from the file's first bytes,
whether the file is surely of that format. ``--from auto`` takes the first format, in the order of
``FORMATS``, whose sniff says yes: the most specific come first, our own stored format last.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO

from core.errors import InputError
from core.formats.events import Event, marked_incomplete
from core.formats.genai import span_events as genai_span_events
from core.formats.genai_messages import MessageReader
from core.formats.inspect_ai import looks_like_inspect, read_inspect
from core.formats.langfuse import looks_like_langfuse, read_langfuse
from core.formats.langsmith import looks_like_langsmith, read_langsmith
from core.formats.openinference import SPAN_KIND, read_openinference
from core.formats.openinference import span_events as openinference_span_events
from core.formats.otlp import Span, dropped_reason, looks_like_json, looks_like_protobuf, read_spans
from core.formats.phoenix_spans import looks_like_phoenix
from core.formats.provider_logs import read_log, sniff_cassette, sniff_pairs
from core.formats.pydantic_ai import looks_like_pydantic_ai, read_pydantic_ai
from core.formats.vercel_ai import looks_like_vercel_ai, read_vercel_ai
from core.providers.base import Dialect
from core.providers.registry import all_providers

SNIFF_BYTES = 64 * 1024
"""How much of a file ``--from auto`` looks at."""

OWN_FORMAT = "traceloupe"

Reader = Callable[[IO[bytes], str], Iterable[Event]]


@dataclass(frozen=True, slots=True)
class TraceFormat:
    """One format: ``read`` is None for our own stored format, which ``core.reader`` reads as it is;
    ``verifiable`` when its model calls carry the provider body as sent (``import --verify`` rebuilds it)."""

    name: str
    description: str
    sniff: Callable[[bytes], bool]
    read: Reader | None
    verifiable: bool = False


def otlp_span_events(span: Span, path: str, reader: MessageReader) -> Iterator[Event]:
    """The model call or tool run one OTLP span is, read by the convention it follows (a file's and a live span's)."""
    if SPAN_KIND in span.attributes:
        events = openinference_span_events(span, path, reader)
    else:
        events = genai_span_events(span, path, reader)
    yield from marked_incomplete(events, dropped_reason(span))


def read_otlp(stream: IO[bytes], path: str) -> Iterator[Event]:
    """An OTLP file's model calls and tool runs, each span read by the convention it follows."""
    reader = MessageReader()
    for span in read_spans(stream, path):
        yield from otlp_span_events(span, path, reader)


def _otlp_head(head: bytes) -> bool:
    if looks_like_json(head):
        return b'"resourceSpans"' in head or b'"resource_spans"' in head
    return looks_like_protobuf(head)


def _sniff_otlp(head: bytes) -> bool:
    return _otlp_head(head)


def _sniff_openinference(head: bytes) -> bool:
    if looks_like_phoenix(head):
        return True
    return _otlp_head(head) and b"openinference.span.kind" in head and b"gen_ai.operation.name" not in head


def _sniff_provider_log(head: bytes) -> bool:
    return sniff_cassette(head) or sniff_pairs(head)


def _never(head: bytes) -> bool:
    return False


def _provider_log_as(dialect: Dialect) -> TraceFormat:
    """A provider log read as ``dialect`` whatever its exchanges look like (``--from <provider>``; never sniffed)."""

    def read(stream: IO[bytes], path: str) -> Iterator[Event]:
        return read_log(stream, path, dialect)

    description = f"{dialect.name} request/response pairs (JSONL) or a recorded-HTTP cassette, read as {dialect.name}"
    return TraceFormat(dialect.name, description, _never, read, verifiable=True)


def _sniff_own(head: bytes) -> bool:
    start = head.lstrip()[:1]
    return start in (b"{", b"[") and b'"role"' in head


FORMATS: tuple[TraceFormat, ...] = (
    TraceFormat(
        "openinference",
        "OpenInference spans (Arize Phoenix) in an OTLP file or a Phoenix span export",
        _sniff_openinference,
        read_openinference,
    ),
    TraceFormat("otlp", "OpenTelemetry GenAI spans in an OTLP/JSON or OTLP/protobuf file", _sniff_otlp, read_otlp),
    TraceFormat(
        "langfuse", "a Langfuse trace export (a trace and its observations)", looks_like_langfuse, read_langfuse
    ),
    TraceFormat(
        "langsmith",
        "LangSmith runs: run trees, lists of runs, or the SDK's post/patch ingest body",
        looks_like_langsmith,
        read_langsmith,
    ),
    TraceFormat(
        "provider-log",
        "provider request/response pairs (JSONL) or a recorded-HTTP cassette (VCR.py), each exchange read as the "
        "provider its URL or shape names",
        _sniff_provider_log,
        read_log,
        verifiable=True,
    ),
    *(_provider_log_as(dialect) for dialect in all_providers()),
    # Agent transcripts: before our own format, whose sniff takes any JSON holding a "role".
    TraceFormat(
        "pydantic-ai",
        "pydantic-ai message history JSON (ModelMessagesTypeAdapter)",
        looks_like_pydantic_ai,
        read_pydantic_ai,
    ),
    TraceFormat(
        "inspect",
        "an inspect_ai eval log (.eval or .json), a conversation per sample and epoch",
        looks_like_inspect,
        read_inspect,
    ),
    TraceFormat(
        "vercel-ai", "Vercel AI SDK UI messages or model messages (JSON)", looks_like_vercel_ai, read_vercel_ai
    ),
    TraceFormat(OWN_FORMAT, "Traceloupe's stored messages (.json, .jsonl), core/FORMAT.md", _sniff_own, None),
)


def format_names() -> list[str]:
    """The names ``--from`` takes, ``auto`` first."""
    return ["auto", *(f.name for f in FORMATS)]


def format_named(name: str) -> TraceFormat:
    """The format called ``name``; InputError listing the known ones otherwise."""
    for trace_format in FORMATS:
        if trace_format.name == name:
            return trace_format
    raise InputError(f"unknown format {name!r}; known: {', '.join(format_names())}")


def sniff(head: bytes, source: str) -> TraceFormat:
    """The first format whose sniff recognises ``head``; InputError naming the file when none does."""
    for trace_format in FORMATS:
        if trace_format.sniff(head):
            return trace_format
    raise InputError(
        f"cannot tell which format this is; name it with --from ({', '.join(format_names()[1:])})", source=source
    )
