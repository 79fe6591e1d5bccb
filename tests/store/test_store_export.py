"""Export: JSONL that re-imports to the same state and carries every key that was imported."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.reader import read_bytes
from core.store import Store
from tests.store.store_factory import dataset
from web.cli import main


def _state(store: Store) -> tuple[Any, ...]:
    """Everything a user sees: counts, every list row, and every message of every conversation."""
    conversations = list(store.iter_conversations())
    details = {
        c.conversation_id: [
            (m.msg_id, m.kind, m.create_ts, m.body) for m in store.get_conversation(c.conversation_id).messages
        ]
        for c in conversations
    }
    return store.counts(), conversations, details


def _messages_with_odd_keys() -> list[dict[str, Any]]:
    messages = dataset(seed=11, conversations=4, turns=3, records=5)
    messages.append(
        {
            "role": "assistant",
            "content": "damaged, with keys only a newer agent knows",
            "conversation_id": "odd",
            "create_ts": 5,
            "msg_id": "odd-1",
            "reasoning_content": [{"type": "thinking", "thinking": "hm", "signature": "sig"}],
            "future_field": {"nested": [1.5, True, None, "文字"]},
            "additional_kwargs": {"__trace_meta": {"copied": True}},
        }
    )
    messages.append({"role": "system", "content": "legacy without msg_id", "conversation_id": "odd", "create_ts": 6})
    return messages


def test_export_reimports_to_the_same_state(db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.jsonl"
    messages = _messages_with_odd_keys()
    source.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
    assert main(["import", str(source), "--db", db_url]) == 0
    assert f"imported {len(messages)} messages" in capsys.readouterr().out
    assert main(["export", "--db", db_url]) == 0
    exported = capsys.readouterr().out.encode()

    with Store.open(db_url) as original:
        before = _state(original)
    other = str(tmp_path / "copy.db")
    with Store.open(other) as copy:
        copy.import_records(read_bytes(exported, source="export.jsonl"), source="export.jsonl")
        after = _state(copy)
    assert after == before

    # Every key of every imported object comes back, exactly.
    lines = [orjson.loads(line) for line in io.BytesIO(exported)]
    by_id = {m.get("msg_id", m["content"]): m for m in messages}
    assert sorted(lines, key=lambda m: m.get("msg_id", m["content"])) == sorted(
        by_id.values(), key=lambda m: m.get("msg_id", m["content"])
    )


def test_export_one_conversation(store: Store, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messages = dataset(seed=12, conversations=3)
    store.import_records(read_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages), source="x"), source="x")
    out = tmp_path / "one.jsonl"
    assert main(["export", "--db", db_url, "--conversation", "s12-c1", "-o", str(out)]) == 0
    got = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    want = sorted((m for m in messages if m["conversation_id"] == "s12-c1"), key=lambda m: m["create_ts"])
    assert got == want
    assert main(["export", "--db", db_url, "--conversation", "missing"]) == 1
    assert "no conversation 'missing'" in capsys.readouterr().err


BIG = 123456789012345678901234567890  # past 64 bits: orjson alone would read it as a float


def test_integers_past_64_bits_come_back_exactly(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    messages = [
        {
            "role": "system",
            "content": "ids from a system with 128-bit counters",
            "conversation_id": "big",
            "create_ts": 1,
            "msg_id": "big-1",
            "additional_kwargs": {"span_id": BIG, "negative": -9_300_000_000_000_000_000},
            "future_field": [BIG, 1.5, 18_446_744_073_709_551_615],
        }
    ]
    source = tmp_path / "big.jsonl"
    source.write_text("".join(json.dumps(m) + "\n" for m in messages))
    assert main(["import", str(source), "--db", db_url]) == 0
    capsys.readouterr()
    assert main(["export", "--db", db_url]) == 0
    exported = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert exported == messages
    assert type(exported[0]["additional_kwargs"]["span_id"]) is int
