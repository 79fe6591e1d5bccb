"""Runs in an export file: one JSONL line ``{"traceloupe_run": {...}}`` per run, after the messages.

An export holds the whole state, runs included, so importing it into an empty database gives the
same state. A run line is not a message (FORMAT.md describes messages), so the reader hands such
lines to the import alone (``core.reader``, ``runs=``); every other reader refuses them as before.
A run is identified by its ``run_id``: importing it again is a no-op; its conversation must be
stored or in the same file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import Connection, func, insert, select, update

from core.errors import InputError
from core.fields import IDEMPOTENCY_KEY, MODEL, PROVIDER
from core.reader import RUN_LINE_KEY, RunLine, describe_validation_error
from core.store.tables import CONVERSATIONS, MAX_ID_CHARS, RUNS
from core.store.views import RunStatus, RunView

RUN_KEY = RUN_LINE_KEY

_Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
_Key = Annotated[str, Field(min_length=1, max_length=IDEMPOTENCY_KEY.max_chars)]
_Provider = Annotated[str, Field(max_length=PROVIDER.max_chars)]
_Model = Annotated[str, Field(max_length=MODEL.max_chars)]
MAX_LEVELS = 255
"""A run line nests no deeper than a message may (``core.reader``: what pydantic's serialiser writes back)."""
_BigInt = Annotated[int, Field(ge=-(2**63), lt=2**63)]
_Int = Annotated[int, Field(ge=-(2**31), lt=2**31)]  # INTEGER columns: 32 bits on PostgreSQL


class _Run(BaseModel):
    """A run line's fields, checked as strictly as the columns they go to."""

    model_config = ConfigDict(extra="forbid", strict=True)

    run_id: _Id
    conversation_id: _Id
    up_to_msg_id: _Id | None = None
    provider: _Provider
    model: _Model
    status: RunStatus
    request_body: dict[str, Any]
    response_body: dict[str, Any] | None = None
    error: str | None = None
    started_at: _BigInt
    finished_at: _BigInt | None = None
    latency_ms: _BigInt | None = None
    input_tokens: _Int | None = None
    output_tokens: _Int | None = None
    total_tokens: _Int | None = None
    usage: dict[str, Any] | None = None
    idempotency_key: _Key | None = None
    reply: dict[str, Any] | None = None


def export_line(run: RunView) -> dict[str, Any]:
    """The export line of a run (every column but the row ids)."""
    fields = {
        "run_id": run.run_id,
        "conversation_id": run.conversation_id,
        "up_to_msg_id": run.up_to_msg_id,
        "provider": run.provider,
        "model": run.model,
        "status": run.status,
        "request_body": run.request_body,
        "response_body": run.response_body,
        "error": run.error,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "latency_ms": run.latency_ms,
        "input_tokens": run.usage.input_tokens,
        "output_tokens": run.usage.output_tokens,
        "total_tokens": run.usage.total_tokens,
        "usage": run.usage.raw,
        "idempotency_key": run.idempotency_key,
        "reply": run.reply,
    }
    return {RUN_KEY: fields}


@dataclass(frozen=True, slots=True)
class PreparedRun:
    """A run line checked and ready to store, with where it was read."""

    fields: dict[str, Any]
    line: RunLine


def prepare_runs(lines: Sequence[RunLine], *, postgres: bool = False) -> list[PreparedRun]:
    """Check every run line; InputError naming the file, the line and the field on the first bad one.

    The limits of messages hold: at most ``MAX_LEVELS`` levels, ids of at most ``MAX_ID_CHARS``, and with
    ``postgres`` no U+0000 anywhere (JSONB and text columns cannot hold it).
    """
    out: list[PreparedRun] = []
    for line in lines:
        body = line.value.get(RUN_KEY)
        root = f"{line.path}.{RUN_KEY}"
        if _levels(line.value) > MAX_LEVELS:
            raise InputError(
                f"a run nested too deeply to store (at most {MAX_LEVELS} levels, as a message)",
                source=line.source,
                line=line.line,
                path=root,
            )
        nul = _nul_at(body, root) if postgres else None
        if nul is not None:
            raise InputError("contains U+0000, which PostgreSQL cannot store", source=line.source, line=line.line,
                             path=nul)  # fmt: skip
        try:
            run = _Run.model_validate(body)
        except ValidationError as exc:
            path, reason = describe_validation_error(exc, body, f"{line.path}.{RUN_KEY}")
            raise InputError(f"not a run: {reason}", source=line.source, line=line.line, path=path) from None
        out.append(PreparedRun(fields=run.model_dump(), line=line))
    return out


def _levels(value: Any) -> int:
    """How deep ``value`` nests (a scalar is 0), without recursion: a hostile line may nest a thousand levels."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if depth <= MAX_LEVELS:
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _nul_at(value: Any, root: str) -> str | None:
    """The JSON path of the first string or key holding U+0000, or None."""
    stack: list[tuple[Any, str]] = [(value, root)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return path
        elif isinstance(item, dict):
            for key, child in item.items():
                if "\x00" in key:
                    return path
                stack.append((child, f"{path}.{key}"))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(item))
    return None


def write_runs(conn: Connection, runs: Sequence[PreparedRun]) -> int:
    """Store the runs not stored yet (by run_id), counted on their conversations; returns how many were stored."""
    r, c = RUNS.c, CONVERSATIONS.c
    stored = 0
    for run in runs:
        fields = dict(run.fields)
        if conn.execute(select(r.id).where(r.run_id == fields["run_id"])).first() is not None:
            continue
        key = fields["idempotency_key"]
        if key is not None and conn.execute(select(r.id).where(r.idempotency_key == key)).first() is not None:
            raise _refused(run, f"run {fields['run_id']!r}: its idempotency key belongs to another stored run")
        conversation_id = fields.pop("conversation_id")
        pk = conn.execute(select(c.id).where(c.conversation_id == conversation_id)).scalar()
        if pk is None:
            raise _refused(
                run, f"run {fields['run_id']!r} names conversation {conversation_id!r}, neither stored nor in this file"
            )
        conn.execute(insert(RUNS).values(conversation_pk=pk, **fields))
        started = fields["started_at"]
        later = func.max if conn.dialect.name == "sqlite" else func.greatest  # both: NULL when last_activity is
        last = later(c.last_activity, started)
        conn.execute(
            update(CONVERSATIONS).where(c.id == pk).values(runs=c.runs + 1, last_activity=func.coalesce(last, started))
        )
        stored += 1
    return stored


def _refused(run: PreparedRun, reason: str) -> InputError:
    return InputError(reason, source=run.line.source, line=run.line.line, path=f"{run.line.path}.{RUN_KEY}")
