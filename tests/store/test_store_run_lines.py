"""Run lines of an import file go through the limits messages do: nesting, id lengths, U+0000 on PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from core.errors import InputError
from core.store import Store

MESSAGE = b'{"role":"system","content":"x","create_ts":1,"msg_id":"m","conversation_id":"c"}\n'


def run_line(**fields: Any) -> bytes:
    run = {"run_id": "r1", "conversation_id": "c", "provider": "openai", "model": "gpt-4o", "status": "ok"}
    run.update({"request_body": {"model": "gpt-4o"}, "started_at": 1})
    run.update(fields)
    return orjson.dumps({"traceloupe_run": run}, option=orjson.OPT_PASSTHROUGH_SUBCLASS) + b"\n"


def nested_text(levels: int) -> str:
    """A request body nested ``levels`` deep, as JSON text (orjson writes at most 254 levels itself)."""
    return '{"a":' * (levels - 1) + '{"model":"gpt-4o"}' + "}" * (levels - 1)


def _line_with_body(levels: int) -> bytes:
    head = run_line(request_body={"__body__": 0})
    return head.replace(b'{"__body__":0}', nested_text(levels).encode())


def _import(store: Store, tmp_path: Path, line: bytes) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_bytes(MESSAGE + line)
    store.import_path(path)


@pytest.mark.parametrize("levels", [300, 900, 1010])
def test_a_run_line_nested_past_the_message_limit_refuses_its_file_in_one_line(
    store: Store, tmp_path: Path, levels: int
) -> None:
    with pytest.raises(InputError, match="nested too deeply") as refused:
        _import(store, tmp_path, _line_with_body(levels))
    assert refused.value.line == 2
    assert store.counts()["messages"] == 0 and store.counts()["runs"] == 0


def test_a_run_line_nested_within_the_limit_is_stored(store: Store, tmp_path: Path) -> None:
    _import(store, tmp_path, _line_with_body(200))
    assert store.counts()["runs"] == 1


@pytest.mark.parametrize(
    "field,value",
    [
        ("idempotency_key", "k" * 5000),
        ("run_id", "r" * 5000),
        ("up_to_msg_id", "m" * 5000),
        ("model", "g" * 3_000_000),
        ("provider", "p" * 5000),
    ],
    ids=["key", "run-id", "upto", "model", "provider"],
)
def test_a_run_line_with_an_overlong_id_or_name_is_refused_naming_the_field(
    store: Store, tmp_path: Path, field: str, value: str
) -> None:
    with pytest.raises(InputError, match=f"traceloupe_run.{field}"):
        _import(store, tmp_path, run_line(**{field: value}))
    assert store.counts()["messages"] == 0


@pytest.mark.parametrize(
    "fields",
    [{"error": "bad\x00"}, {"idempotency_key": "k\x00ey"}, {"request_body": {"model": "gpt\x00"}}],
    ids=["error", "key", "body"],
)
def test_a_run_line_with_nul_is_refused_on_postgresql_and_kept_on_sqlite(
    store: Store, tmp_path: Path, fields: dict[str, Any]
) -> None:
    if store.backend == "postgresql":
        with pytest.raises(InputError, match="U\\+0000"):
            _import(store, tmp_path, run_line(**fields))
        assert store.counts()["runs"] == 0
    else:
        _import(store, tmp_path, run_line(**fields))
        assert store.counts()["runs"] == 1
