"""Export: JSONL that re-imports to the same state and carries every key that was imported."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.reader import read_bytes
from core.store import NewRun, Store
from core.store.export_lines import KINDS
from tests.store.every_kind import fill_every_kind
from tests.store.store_factory import dataset
from tests.store.store_pg import empty_store_url
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


def _runs_state(store: Store) -> list[Any]:
    """Every run as a user sees it, without the row-independent nothing: all of RunView."""
    return sorted(store.list_runs(limit=500)[0], key=lambda r: r.run_id)


def test_export_carries_the_runs_and_reimports_to_the_same_state(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Silent loss on backup and restore: an export without runs lost every replay; now it is the whole state."""
    from core.store import TokenUsage

    messages = dataset(seed=13, conversations=3, turns=2, records=3)
    with Store.open(db_url) as store:
        store.import_records(read_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages), source="x"), source="x")
        ok = store.start_run(
            NewRun("s13-c0", provider="openai", model="gpt", request_body={"m": [1]}, started_at=2 * 10**12)
        )
        store.finish_run(
            ok.run_id,
            status="ok",
            response_body={"choices": []},
            usage=TokenUsage(input_tokens=3, output_tokens=4, total_tokens=7, raw={"u": 1}),
            reply={"role": "assistant", "msg_type": "text", "content": "hi"},
            finished_at=2 * 10**12 + 50,
        )
        store.start_run(NewRun("s13-c2", provider="anthropic", model="claude", request_body={}, idempotency_key="k1"))
        before = _state(store), _runs_state(store)
    out = tmp_path / "all.jsonl"
    assert main(["export", "--db", db_url, "-o", str(out)]) == 0
    copy = str(tmp_path / "copy.db")
    assert main(["import", str(out), "--db", copy]) == 0
    assert "also stored 2 runs" in capsys.readouterr().out
    with Store.open(copy) as restored:
        assert (_state(restored), _runs_state(restored)) == before
    assert main(["import", str(out), "--db", copy]) == 0  # again: nothing changes
    assert "also stored" not in capsys.readouterr().out
    with Store.open(copy) as restored:
        assert (_state(restored), _runs_state(restored)) == before
    assert main(["export", "--db", db_url, "--no-runs"]) == 0
    assert "traceloupe_run" not in capsys.readouterr().out


def test_a_bad_run_line_refuses_the_file(db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = b'{"role":"system","content":"x","create_ts":1,"msg_id":"m","conversation_id":"c"}\n'
    run = {"run_id": "r", "conversation_id": "elsewhere", "provider": "p", "model": "m", "status": "ok"}
    path = tmp_path / "runs.jsonl"
    path.write_bytes(good + orjson.dumps({"traceloupe_run": {**run, "request_body": {}, "started_at": 1}}) + b"\n")
    assert main(["import", str(path), "--db", db_url]) == 1
    err = capsys.readouterr().err
    assert f"{path}:2 at $.traceloupe_run.conversation_id: run 'r' names conversation 'elsewhere'" in err
    path.write_bytes(good + orjson.dumps({"traceloupe_run": {**run, "started_at": "now"}}) + b"\n")
    assert main(["import", str(path), "--db", db_url]) == 1
    assert f"{path}:2 at $.traceloupe_run" in capsys.readouterr().err
    with Store.open(db_url) as store:
        assert store.counts()["messages"] == 0


def test_export_is_the_stored_text_byte_for_byte(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PostgreSQL's JSONB reorders keys (longer keys after shorter); the export gives the text as imported."""
    lines = [
        b'{"zzzz_last_key":1,"role":"system","content":"k\\u00e9ys in file order","create_ts":5,"msg_id":"a",'
        b'"conversation_id":"c","a":{"yy":1.50,"x":[true,null]}}',
        b'{"role":"user","msg_type":"text","content":"\xe6\x96\x87","msg_id":"b","conversation_id":"c","create_ts":6}',
    ]
    path = tmp_path / "order.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert main(["import", str(path), "--db", db_url]) == 0
    capsys.readouterr()
    assert main(["export", "--db", db_url, "--no-runs"]) == 0
    exported = capsys.readouterr().out.encode().splitlines()
    with Store.open(db_url) as store:
        stored = list(store.export_texts())
    assert [line.decode() for line in exported] == stored
    assert [orjson.loads(line) for line in exported] == [orjson.loads(line) for line in lines]
    assert exported[0].startswith(b'{"zzzz_last_key":1,"role":"system"')  # file order, not JSONB's


def test_database_and_export_files_are_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Information disclosure through file modes: traces and runs are readable by their owner only."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        db = tmp_path / "new.db"
        with Store.open(str(db)) as store:
            store.import_records(read_bytes(orjson.dumps(dataset(seed=1, conversations=1)[0]), source="x"), source="x")
            out = tmp_path / "out.jsonl"
            out.write_bytes(b"")
            out.chmod(0o644)  # an existing file is narrowed too
            assert main(["export", "--db", str(db), "-o", str(out)]) == 0
            for path in (db, Path(f"{db}-wal"), out):
                assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    finally:
        os.umask(old)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param("sqlite", "postgresql", id="sqlite-to-postgresql", marks=pytest.mark.postgres),
        pytest.param("postgresql", "sqlite", id="postgresql-to-sqlite", marks=pytest.mark.postgres),
    ],
)
def test_an_export_of_every_kind_reimports_on_the_other_backend_byte_for_byte(
    first: str, second: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Silent loss on backup and restore: step runs, suites and suite runs were left out of an export (53 runs
    exported as 17); now every record comes back, and exporting the copy gives the same bytes."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with empty_store_url(first, tmp_path / "a") as source, empty_store_url(second, tmp_path / "b") as copy:
        with Store.open(source) as store:
            fill_every_kind(store)
            secret = store.shared_secret("csrf")
            before = _every_record(store)
        out = tmp_path / "all.jsonl"
        assert main(["export", "--db", source, "-o", str(out)]) == 0
        exported = out.read_bytes()
        others = [orjson.loads(line) for line in exported.splitlines() if line.startswith(b'{"traceloupe_')]
        assert {next(iter(line)) for line in others} == {kind.key for kind in KINDS}
        for kind in KINDS:  # every column of every kind is exercised: a new column must come along too
            values = [line[kind.key] for line in others if kind.key in line]
            assert {name for value in values for name, v in value.items() if v is not None} == set(values[0]), kind.name
        assert secret not in exported.decode()

        assert main(["import", str(out), "--db", copy]) == 0
        stored = (
            "also stored 2 request contexts, 2 runs, 2 step runs, 4 steps, 2 suites, 4 suite members, 3 suite runs, "
            "7 suite run items"
        )
        assert stored in capsys.readouterr().out
        again = tmp_path / "again.jsonl"
        assert main(["export", "--db", copy, "-o", str(again)]) == 0
        assert again.read_bytes() == exported
        with Store.open(copy) as restored:
            assert _every_record(restored) == before


def _every_record(store: Store) -> tuple[Any, ...]:
    """What a user sees of every kind: the list rows, runs, step runs with their steps, suites and suite runs."""
    from core.suites import Suites

    suites = Suites(store)
    suite_runs = [
        (s, [replace(suites.run(r.run_id), items=tuple(replace(i, item_pk=0) for i in suites.run(r.run_id).items))
             for r in suites.runs(s.name)])
        for s in suites.summaries()
    ]  # fmt: skip
    step_runs = sorted(store.list_step_runs(limit=100), key=lambda r: r.run_id)
    return _state(store), _runs_state(store), step_runs, suite_runs, [suites.get(s.name) for s in suites.summaries()]


def test_export_of_one_conversation_carries_its_contexts_runs_and_step_runs_but_no_suites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(str(tmp_path / "all.db")) as store:
        fill_every_kind(store)
        step_run = store.list_step_runs("s21-c0")[0]
    assert main(["export", "--db", str(tmp_path / "all.db"), "--conversation", "s21-c0"]) == 0
    lines = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    others = [line for line in lines if next(iter(line)).startswith("traceloupe_")]
    kinds = ["traceloupe_request"] * 2 + ["traceloupe_run", "traceloupe_step_run"] + ["traceloupe_step"] * 2
    assert [next(iter(line)) for line in others] == kinds
    assert {line["traceloupe_step"]["step_run_id"] for line in others[4:]} == {step_run.run_id}
    source = tmp_path / "one.jsonl"
    source.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    assert main(["import", str(source), "--db", str(tmp_path / "one.db")]) == 0
    assert "also stored 2 request contexts, 1 run, 1 step run, 2 steps" in capsys.readouterr().out
    with Store.open(str(tmp_path / "one.db")) as copy:
        assert copy.get_step_run(step_run.run_id) == step_run


def test_export_without_runs_keeps_the_request_contexts_beside_the_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(str(tmp_path / "all.db")) as store:
        fill_every_kind(store)
    assert main(["export", "--db", str(tmp_path / "all.db"), "--no-runs"]) == 0
    keys = [next(iter(orjson.loads(line))) for line in capsys.readouterr().out.splitlines()]
    assert [key for key in keys if key.startswith("traceloupe_")] == ["traceloupe_request"] * 2
