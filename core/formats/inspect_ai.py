"""inspect_ai eval logs read into model calls: one conversation per sample and epoch.

A log is JSON (``{"version", "eval", "samples": [...]}``) or ``.eval``, a zip holding ``header.json`` and one
``samples/<id>_epoch_<n>.json`` per sample (https://inspect.aisi.org.uk/eval-logs.html). A sample's ``events``
hold its ``model`` events: the input sent (``input``, or in newer logs ``input_refs``, ranges into the
sample's ``message_pool``), the output's first choice, the tools, tool choice and generation config. Each is a
call; the sample's ``messages`` (its final transcript) then add what no model event held. A sample without
model events (older logs keep a ``transcript``) is read from its messages alone. Large strings stand in the
log as ``attachment://<hash>``, resolved from the sample's ``attachments``. Model calls made while scoring
(in a ``scorer`` span or step) are a grader's, not the sample's conversation, and are passed over.
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from typing import IO, Any

import orjson

from core.errors import InputError
from core.formats.events import Event, ModelCall, SourceRef, parse_time
from core.formats.inspect_messages import InspectMessages, resolve_attachments
from core.formats.span_fields import request_of
from core.formats.transcript_calls import CallsOfTranscript, conversation_key
from core.llm.messages import LLMAssistantMessage, LLMMessage
from core.request_context.stored import StoredRequest

_SCORING = ("scorer", "scorers")
# What a model event or a sample records beyond its messages: kept aside, no place in the stored format.
_EVENT_KEPT = ("usage", "error")
_SAMPLE_KEPT = ("scores", "error", "limit")


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def looks_like_inspect(head: bytes) -> bool:
    """Whether a file's first bytes are an inspect_ai log: an ``.eval`` zip, or a JSON log's ``eval`` spec."""
    if head[:4] == b"PK\x03\x04":
        return b"header.json" in head or b"_journal/" in head or b"samples/" in head
    return head.lstrip()[:1] == b"{" and b'"eval"' in head and b'"task"' in head and b'"version"' in head


def _scoring_spans(events: list[Any]) -> set[str]:
    """The ids of spans opened by scoring, and of every span under them."""
    parents: dict[str, tuple[str | None, str | None]] = {}
    for event in events:
        if isinstance(event, dict) and event.get("event") == "span_begin" and isinstance(event.get("id"), str):
            parents[event["id"]] = (event.get("parent_id"), event.get("type"))
    scoring: set[str] = set()
    for span in parents:
        at: str | None = span
        while at is not None and at in parents:
            parent, kind = parents[at]
            if kind in _SCORING:
                scoring.add(span)
                break
            at = parent
    return scoring


def _solver_model_events(events: list[Any]) -> Iterator[dict[str, Any]]:
    scoring = _scoring_spans(events)
    open_scorer_steps = 0
    for event in events:
        if not isinstance(event, dict):
            continue
        kind = event.get("event")
        if kind == "step" and event.get("type") in _SCORING:
            open_scorer_steps += 1 if event.get("action") == "begin" else -1
        elif kind == "model" and open_scorer_steps <= 0 and event.get("span_id") not in scoring:
            yield event


def _input(event: dict[str, Any], pool: list[Any]) -> list[Any]:
    refs = event.get("input_refs")
    if isinstance(refs, list) and refs:
        sent: list[Any] = []
        for ref in refs:
            if isinstance(ref, list) and len(ref) == 2 and all(isinstance(i, int) for i in ref):
                sent.extend(pool[ref[0] : ref[1]])
        return sent
    return event.get("input") or []


def _request(event: dict[str, Any], extra: dict[str, Any]) -> StoredRequest | None:
    model = event.get("model")
    provider, _, name = model.partition("/") if isinstance(model, str) else ("", "", "")
    config = _object(event.get("config"))
    params = {
        "max_tokens": config.get("max_tokens"),
        "temperature": config.get("temperature"),
        "top_p": config.get("top_p"),
        "stop": config.get("stop_seqs"),
    }
    return request_of(
        system=provider or None,
        model=name or model,
        tools=event.get("tools"),
        params=params,
        extra=extra,
        tool_choice=event.get("tool_choice"),
    )


def sample_events(sample: dict[str, Any], eval_id: str, path: str, line: int | None) -> Iterator[Event]:
    """The calls of one sample (one epoch of it): its model events, then what its final messages add."""
    sample = resolve_attachments(sample, sample.get("attachments") or {})
    ident = f"{sample.get('id')}:epoch{sample.get('epoch', 1)}"
    key = conversation_key(f"{eval_id}:{ident}", None, "inspect")
    reader = InspectMessages()
    pool = sample.get("message_pool")
    pool = pool if isinstance(pool, list) else []
    calls: list[ModelCall] = []
    last = None
    for event in _solver_model_events(sample.get("events") or []):
        walk = CallsOfTranscript(key)
        reader.unplaced = []
        walk.send(reader.messages(_input(event, pool)))
        output = _object(event.get("output"))
        choices = output.get("choices") or [None]
        first = _object(choices[0])
        extra: dict[str, Any] = {k: output[k] for k in _EVENT_KEPT if output.get(k)}
        if first.get("stop_reason"):
            extra["stop_reason"] = first["stop_reason"]
        request = _request(event, extra)
        answered = reader.messages([first["message"]]) if isinstance(first.get("message"), dict) else None
        if reader.unplaced:
            extra["parts"] = reader.unplaced
        started = parse_time(event.get("timestamp"))
        ended = parse_time(event.get("completed")) or started
        last = ended or last
        source = SourceRef(path, line, f"{ident}/{event.get('uuid') or len(calls)}")
        if answered is None:
            calls.append(ModelCall(source, key, tuple(walk.history), None, request, started, ended, extra=extra))
            continue
        calls.append(walk.answer(answered, source, request=request, started_at=started, ended_at=ended, extra=extra))
    kept = {k: sample[k] for k in _SAMPLE_KEPT if sample.get(k)}
    reader.unplaced = []
    final = reader.messages(sample.get("messages") or [])
    if reader.unplaced and not calls:
        kept["parts"] = reader.unplaced
    source = SourceRef(path, line, f"{ident}/messages")
    if calls:
        calls[-1].extra.update(kept)
        yield from calls
        if final:  # the final transcript, after every call: results and turns no model event held
            yield ModelCall(source, key, tuple(final), (), started_at=last, ended_at=last)
        return
    yield from _messages_only(final, key, source, kept)


def _messages_only(final: list[LLMMessage], key: Any, source: SourceRef, kept: dict[str, Any]) -> Iterator[Event]:
    """A sample known by its messages alone: the last assistant message (and what follows it) answers the rest."""
    answer_at = max((i for i, m in enumerate(final) if isinstance(m, LLMAssistantMessage)), default=None)
    if answer_at is None:
        if final:
            yield ModelCall(source, key, tuple(final), None, extra=kept)
        return
    walk = CallsOfTranscript(key)
    walk.send(final[:answer_at])
    yield walk.answer(final[answer_at:], source, extra=kept)


def _eval_id(header: dict[str, Any]) -> str:
    spec = _object(header.get("eval"))
    for field in ("eval_id", "run_id", "task_id"):
        if isinstance(spec.get(field), str) and spec[field]:
            return str(spec[field])
    return str(spec.get("task") or "inspect")


SPOOL_BYTES = 16 << 20
"""An ``.eval`` read from a stream that cannot seek (stdin) is copied to a temporary file past this size."""


def _zip_samples(archive_file: IO[bytes], path: str) -> Iterator[Event]:
    """The samples of an ``.eval`` zip, read one sample file at a time (the zip itself is never read whole)."""
    try:
        archive = zipfile.ZipFile(archive_file)
    except zipfile.BadZipFile as exc:
        raise InputError(f"not an .eval log: {exc}", source=path) from None
    with archive:
        names = archive.namelist()
        header_name = "header.json" if "header.json" in names else "_journal/start.json"
        header = orjson.loads(archive.read(header_name)) if header_name in names else {}
        eval_id = _eval_id(header)
        for name in sorted(n for n in names if n.startswith("samples/") and n.endswith(".json")):
            try:
                sample = orjson.loads(archive.read(name))
            except orjson.JSONDecodeError as exc:
                raise InputError(f"not JSON: {exc}", source=path, path=name) from None
            yield from sample_events(sample, eval_id, path, None)
            del sample


def _seekable(stream: IO[bytes], head: bytes) -> IO[bytes]:
    """The stream from its start: itself when it can seek (a file), else spooled to a temporary file (a zip's
    directory is at its end)."""
    if stream.seekable():
        stream.seek(0)
        return stream
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - closed by the caller
    spool.write(head)
    shutil.copyfileobj(stream, spool)
    spool.seek(0)
    return spool


def read_inspect(stream: IO[bytes], path: str) -> Iterator[Event]:
    """Every sample of an inspect_ai log (``.eval`` or ``.json``), each epoch its own conversation; an ``.eval``
    is read a sample at a time, a JSON log whole."""
    head = stream.read(4)
    if head == b"PK\x03\x04":
        archive = _seekable(stream, head)
        try:
            yield from _zip_samples(archive, path)
        finally:
            if archive is not stream:
                archive.close()
        return
    data = head + stream.read()
    try:
        log = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc}", source=path) from None
    if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
        raise InputError("not an inspect_ai log: no eval spec", source=path)
    eval_id = _eval_id(log)
    for index, sample in enumerate(log.get("samples") or []):
        if not isinstance(sample, dict):
            raise InputError("a sample that is not a JSON object", source=path, path=f"samples[{index}]")
        yield from sample_events(sample, eval_id, path, None)
