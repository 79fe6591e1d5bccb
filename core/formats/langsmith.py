"""LangSmith runs read into model calls and tool runs: run trees (``child_runs``), flat lists of runs (a
``{"runs": [...]}`` page of the API, a JSON array, JSON lines), and the SDK's batch ingest bodies
(``{"post": [...], "patch": [...]}``: one, or several in the order sent, each patch completing the run it names).

A ``llm`` run is a model call: ``inputs.messages`` (LangChain messages, one list per prompt of a batch, or
chat messages as a wrapped OpenAI client sends them) or ``inputs.prompts``; ``outputs.generations``, an
OpenAI completion's ``choices``, or one message. A ``tool`` run is a tool run, paired with its call by the
``tool_call_id`` its output message or its inputs carry, else by name and order. ``chain`` runs only hold
the tree. The conversation is the ``thread_id``, ``session_id`` or ``conversation_id`` of a run's metadata
or its ancestors' (https://docs.smith.langchain.com/observability/how_to_guides/threads), the trace its
thread. Usage, costs and errors are kept aside.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import IO, Any

import orjson

from core.errors import InputError
from core.formats.events import ConversationKey, Event, ModelCall, SourceRef, ToolExecution
from core.formats.genai_messages import MessageReader
from core.formats.langchain_messages import chat_message, unplaced_fields
from core.formats.span_fields import answer_of, content_text, loads, request_of, traced_call

_THREAD_KEYS = ("thread_id", "session_id", "conversation_id")
"""Metadata keys LangSmith groups a thread's traces by, in its documented order."""
_KEPT_RUN = ("error", "total_tokens", "prompt_tokens", "completion_tokens", "total_cost", "feedback_stats")
_KEPT_OUTPUT = ("usage_metadata", "llm_output", "usage")
_PARAMS = ("max_tokens", "temperature", "top_p", "stop")

Run = dict[str, Any]


def _time(value: Any) -> datetime | None:
    """ISO text (the Python SDK) or epoch milliseconds (the JS SDK)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _flatten(run: Any, parent: str | None, out: list[Run]) -> None:
    """``run`` and its ``child_runs`` (each told its parent) into ``out``."""
    if not isinstance(run, dict):
        return
    children = run.get("child_runs") or []
    flat = {k: v for k, v in run.items() if k != "child_runs"}
    if parent is not None and not flat.get("parent_run_id"):
        flat["parent_run_id"] = parent
    out.append(flat)
    for child in children if isinstance(children, list) else []:
        _flatten(child, str(run.get("id") or "") or None, out)


def _patched(posts: list[Any], patches: list[Any]) -> list[Any]:
    """The ingest body's runs, each patch's fields over the run of its id (the JS SDK's patches name their run
    by trace and dotted order only)."""
    runs = [dict(p) for p in posts if isinstance(p, dict)]
    by_key: dict[Any, Run] = {}
    for run in runs:
        by_key[("id", run.get("id"))] = run
        by_key[("order", run.get("trace_id"), run.get("dotted_order"))] = run
    for patch in patches:
        if not isinstance(patch, dict):
            continue
        target = by_key.get(("id", patch.get("id"))) if patch.get("id") else None
        target = target or by_key.get(("order", patch.get("trace_id"), patch.get("dotted_order")))
        if target is None:
            runs.append(dict(patch))
        else:
            target.update({k: v for k, v in patch.items() if v is not None})
    return runs


def _is_ingest_body(document: Any) -> bool:
    return isinstance(document, dict) and ("post" in document or "patch" in document)


def _runs(document: Any) -> list[Run]:
    """Every run of a document, flat."""
    if isinstance(document, list) and document and all(_is_ingest_body(d) for d in document):
        # Bodies as sent, in order (a proxy's or a cassette's requests): a later body patches a run posted earlier.
        document = {key: [run for body in document for run in body.get(key) or []] for key in ("post", "patch")}
    if _is_ingest_body(document):
        document = _patched(document.get("post") or [], document.get("patch") or [])
    elif isinstance(document, dict) and isinstance(document.get("runs"), list):
        document = document["runs"]
    out: list[Run] = []
    for run in document if isinstance(document, list) else [document]:
        _flatten(run, None, out)
    return out


def _thread(run: Run, runs: dict[str, Run]) -> str | None:
    """The thread id of a run's metadata, or of its nearest ancestor's."""
    seen: set[str] = set()
    current: Run | None = run
    while current is not None:
        metadata = (current.get("extra") or {}).get("metadata") or current.get("metadata") or {}
        for key in _THREAD_KEYS:
            value = metadata.get(key) if isinstance(metadata, dict) else None
            if isinstance(value, str | int) and str(value):
                return str(value)
        parent = str(current.get("parent_run_id") or "")
        if not parent or parent in seen:
            return None
        seen.add(parent)
        current = runs.get(parent)
    return None


def _input_items(inputs: Any) -> list[Any] | None:
    inputs = loads(inputs)
    if not isinstance(inputs, dict):
        return None
    messages = loads(inputs.get("messages"))
    if isinstance(messages, list):
        if messages and all(isinstance(m, list) for m in messages):
            return list(messages[0])  # one list per prompt of a batch: a chat model's run holds one
        return messages
    prompts = inputs.get("prompts")
    if isinstance(prompts, list) and prompts:
        return [{"role": "user", "content": content_text(prompts[0])}]
    return None


def _output_items(outputs: Any) -> list[Any] | None:
    outputs = loads(outputs)
    if not isinstance(outputs, dict) or not outputs:
        return None
    generations = outputs.get("generations")
    if isinstance(generations, list) and generations:
        first = generations[0]
        batch = first if isinstance(first, list) else generations
        return [g.get("message") or {"role": "assistant", "content": g.get("text", "")} for g in batch[:1]]
    choices = outputs.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return [choices[0].get("message") or {"role": "assistant", "content": choices[0].get("text", "")}]
    for key in ("message", "output"):
        if isinstance(outputs.get(key), dict):
            return [outputs[key]]
    if outputs.get("role") == "assistant" or outputs.get("type") in ("ai", "message"):
        return [outputs]
    return None


def _messages(items: list[Any] | None, reader: MessageReader, kept: set[bytes]) -> list[Any] | None:
    """``items`` read as messages; what a LangChain message has no place for goes to ``reader.unplaced`` the
    first time the file shows it (every later call resends the same message, with the same fields)."""
    if items is None:
        return None
    out: list[Any] = []
    for item in items:
        out.extend(reader.message(chat_message(item)))
        fields = unplaced_fields(item)
        if fields is not None:
            key = orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)
            if key not in kept:
                kept.add(key)
                reader.unplaced.append(fields)
    return out


def _model_call(run: Run, path: str, key: ConversationKey, reader: MessageReader, kept: set[bytes]) -> ModelCall:
    reader.unplaced = []
    extra_field = run.get("extra") or {}
    invocation = extra_field.get("invocation_params") or {}
    metadata = extra_field.get("metadata") or {}
    inputs = loads(run.get("inputs")) or {}
    inputs = inputs if isinstance(inputs, dict) else {}
    outputs = loads(run.get("outputs"))
    extra: dict[str, Any] = {k: run[k] for k in _KEPT_RUN if run.get(k) not in (None, {}, 0)}
    if isinstance(outputs, dict):
        extra.update({k: outputs[k] for k in _KEPT_OUTPUT if outputs.get(k)})
    sent = _messages(_input_items(inputs), reader, kept)
    answered = _messages(_output_items(outputs), reader, kept)
    model = invocation.get("model") or invocation.get("model_name") or inputs.get("model")
    request = request_of(
        system=metadata.get("ls_provider"),
        model=model or metadata.get("ls_model_name"),
        tools=invocation.get("tools") or inputs.get("tools"),
        params={p: invocation.get(p, inputs.get(p)) for p in _PARAMS},
        extra=extra,
        tool_choice=invocation.get("tool_choice", inputs.get("tool_choice")),
    )
    return traced_call(
        SourceRef(path, None, str(run.get("id") or "") or None, str(run.get("trace_id") or "") or None),
        key,
        tuple(sent) if sent is not None else None,
        answer_of(answered),
        request=request,
        times=(_time(run.get("start_time")), _time(run.get("end_time"))),
        extra=extra,
        unplaced=reader.unplaced,
    )


def _tool_run(run: Run, path: str, key: ConversationKey) -> ToolExecution:
    inputs = loads(run.get("inputs"))
    outputs = loads(run.get("outputs"))
    output = outputs.get("output", outputs) if isinstance(outputs, dict) else outputs
    message = chat_message(output)
    call_id = message.get("tool_call_id") if isinstance(message, dict) and message.get("role") == "tool" else None
    if call_id is None and isinstance(inputs, dict):
        call_id = inputs.get("tool_call_id") or (inputs.get("tool_call") or {}).get("id")
    if isinstance(message, dict) and message.get("role") == "tool":
        output = message.get("content")
    arguments = inputs.get("input", inputs) if isinstance(inputs, dict) else inputs
    return ToolExecution(
        source=SourceRef(path, None, str(run.get("id") or "") or None, str(run.get("trace_id") or "") or None),
        key=key,
        name=str(run.get("name") or "tool"),
        call_id=str(call_id) if call_id else None,
        arguments=None if arguments is None else content_text(arguments),
        result=None if outputs is None else content_text(output),
        is_error=bool(run.get("error")) or (isinstance(message, dict) and message.get("is_error") is True),
        started_at=_time(run.get("start_time")),
        ended_at=_time(run.get("end_time")),
    )


def looks_like_langsmith(head: bytes) -> bool:
    """Whether a file's first bytes hold LangSmith runs."""
    return b'"run_type"' in head and any(k in head for k in (b'"inputs"', b'"child_runs"', b'"dotted_order"'))


def _document(data: bytes, path: str) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as whole:
        lines = [line for line in data.splitlines() if line.strip()]
        try:
            return [orjson.loads(line) for line in lines]
        except orjson.JSONDecodeError:
            raise InputError(f"not JSON or JSON lines: {whole}", source=path) from None


def read_langsmith(stream: IO[bytes], path: str) -> Iterator[Event]:
    """The model calls and tool runs of a LangSmith export (read whole: runs name their parents anywhere)."""
    runs = _runs(_document(stream.read(), path))
    by_id = {str(r["id"]): r for r in runs if r.get("id")}
    reader = MessageReader()
    kept: set[bytes] = set()
    for run in runs:
        kind = run.get("run_type")
        if kind not in ("llm", "tool"):
            continue
        trace = str(run.get("trace_id") or "") or None
        key = ConversationKey(conversation=_thread(run, by_id), thread=trace)
        yield _model_call(run, path, key, reader, kept) if kind == "llm" else _tool_run(run, path, key)
