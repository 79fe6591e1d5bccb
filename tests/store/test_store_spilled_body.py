"""A long line's message text spilled to a temporary file as it is made (``core.store.spilled_body``): never whole in
memory while imported, stored a piece at a time, and read back by every reader as the same line read whole gives
it. On both backends."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from alembic import command
from sqlalchemy import delete, func, select

from core import reader as reader_module
from core.jsonio import loads
from core.reader import Record, read_bytes
from core.store import Store, importer, spilled_body
from core.store.backend import postgres
from core.store.engine import make_engine, read_transaction, write_transaction
from core.store.schema import _config
from core.store.spilled_body import SpilledBody
from core.store.tables import CONVERSATIONS, MESSAGE_OUTLINES, MESSAGES
from tests.store.store_pg import BACKENDS

RECORDS = 400


def _trace(records: int = RECORDS, marker: str = "zanzibarquokka") -> dict[str, Any]:
    """A user message whose trace holds ``records`` tool results of about 10 KB each, a marker in the last."""
    items = [
        {"role": "tool", "msg_id": f"t{i}", "create_ts": 2 + i,
         "tool_reses": [{"call_id": f"c{i}", "name": "search", "result": f"result {i} é " + "lorem ipsum " * 850}]}
        for i in range(records)
    ]  # fmt: skip
    items[-1]["tool_reses"][0]["result"] += f' {marker} \\ \t "quoted"'
    return {"role": "user", "msg_type": "text", "content": "find everything", "conversation_id": "long",
            "msg_id": "u0", "create_ts": 1, "intermediate_trace": {"records": items}}  # fmt: skip


def _file(*messages: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(m) + b"\n" for m in messages)


SHORT = {"role": "user", "msg_type": "text", "content": "a short one", "conversation_id": "short", "msg_id": "s",
         "create_ts": 1}  # fmt: skip


def _import(store: Store, data: bytes, *, streamed: bool, **options: Any) -> Any:
    return store.import_records(
        read_bytes(data, source="long.jsonl", streamed=streamed), source="long.jsonl", **options
    )


@pytest.fixture
def long_lines_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line of more than 1 MB is read a record at a time (the trace's, not SHORT's); its text read back in pieces
    of 64 KB, so it is stored in many."""
    monkeypatch.setattr(reader_module, "LONG_LINE_BYTES", 1_000_000)
    monkeypatch.setattr(spilled_body, "PIECE_BYTES", 64 * 1024)


def _everything_read(store: Store) -> dict[str, Any]:
    """The long conversation as each reader gives it: export, the payload pages' JSON, a timeline page's spans and
    bodies, the typed messages, a search's snippet."""
    with read_transaction(store.engine) as conn:
        pk = conn.execute(select(MESSAGES.c.id).where(MESSAGES.c.msg_id == "u0")).scalar_one()
    outline = store.get_conversation_outline("long")
    assert outline is not None
    node = loads(outline.outlines[0][1])
    spans = [(pk, child[0], child[1]) for child in node[8]]
    window = store.match_windows(["long"], "zanzibarquokka", 20)["long"]
    return {
        "export": list(store.export_texts("long")),
        "json": store.get_conversation_json("long").bodies,
        "bodies": store.get_bodies([pk]),
        "spans": store.read_spans([spans[0], spans[-1], (pk, 0, node[7])]),
        "typed": [m.body for m in store.get_conversation("long").messages],
        "snippet": window.text[window.offset : window.offset + window.length],
    }


@pytest.mark.usefixtures("long_lines_only")
def test_a_spilled_text_reads_back_through_every_reader_as_the_line_read_whole(db_url: str) -> None:
    data = _file(SHORT, _trace())
    with Store.open(db_url) as store:
        _import(store, data, streamed=False)
        whole = _everything_read(store)
        with write_transaction(store.engine) as conn:
            conn.execute(delete(CONVERSATIONS))
        summary = _import(store, data, streamed=True)
        assert summary.imported == 2
        assert _everything_read(store) == whole
        assert whole["export"][0].encode() == orjson.dumps(_trace()) and whole["snippet"] == "zanzibarquokka"
        assert _import(store, data, streamed=True).skipped == 2  # the same file again: compared, nothing stored


@pytest.mark.usefixtures("long_lines_only")
def test_an_import_stopped_after_a_spilled_text_was_written_leaves_nothing(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importer, "CHUNK", 1)

    def stopped(records: Iterator[Record]) -> Iterator[Record]:
        yield from records
        raise KeyboardInterrupt

    with Store.open(db_url) as store:
        records = read_bytes(_file(_trace(), SHORT), source="long.jsonl", streamed=True)
        with pytest.raises(KeyboardInterrupt):
            store.import_records(stopped(records), source="long.jsonl")
        with read_transaction(store.engine) as conn:
            counts = [conn.execute(select(func.count()).select_from(t)).scalar() for t in (MESSAGES, MESSAGE_OUTLINES)]
        assert counts == [0, 0] and list(store.iter_conversations()) == []


@pytest.mark.usefixtures("long_lines_only")
def test_a_long_line_is_imported_without_its_text_whole_in_memory(db_url: str) -> None:
    """Python's allocations while an 8 MB line is read, prepared and stored: the line itself and less than its text
    again (the text whole was one more copy, on SQLite two)."""
    data = _file(_trace(records=800))
    with Store.open(db_url) as store:
        tracemalloc.start()
        try:
            _import(store, data, streamed=True)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 2 * len(data), (peak, len(data))


def test_a_needle_is_found_across_the_pieces_of_a_spilled_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spilled_body, "PIECE_BYTES", 4)
    body = SpilledBody()
    text = b'{"a":"x\\\\u0000","b":"\\u0000"}'
    body.file.write(text)
    assert len(body) == len(text) and body.read() == text and body[3:9] == text[3:9]
    for needle in (b"\\u0000", b"x", b"}", b"nowhere"):
        assert [body.find(needle, start) for start in range(len(text))] == [
            text.find(needle, start) for start in range(len(text))
        ]


@pytest.mark.usefixtures("long_lines_only")
@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_revision_0030_moves_the_body_last_on_sqlite_and_keeps_every_text_both_ways(
    fresh_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres, "insert_conversations", _conversations_without_grams)  # 0031's table is not there
    data = _file(SHORT, _trace())
    engine = make_engine(fresh_url)
    try:
        with write_transaction(engine) as conn:
            command.upgrade(_config(conn), "0029")
        with Store(engine) as store:
            _import(store, data, streamed=True)
            before = _everything_read(store)
        for step in (
            lambda conn: command.upgrade(_config(conn), "0030"),
            lambda c: command.downgrade(_config(c), "0029"),
        ):
            with write_transaction(engine) as conn:
                step(conn)
            with Store(engine) as store:
                assert _everything_read(store) == before
            if engine.dialect.name == "sqlite":
                with engine.connect() as conn:
                    columns = [row[1] for row in conn.exec_driver_sql("PRAGMA table_info(messages)")]
                assert columns[-1] == "body" and columns.count("body") == 1
    finally:
        engine.dispose()


def _conversations_without_grams(conn: Any, rows: Any) -> dict[str, int]:
    """PostgreSQL's new conversations as Traceloupe wrote them before revision 0031 added their grams; their ids."""
    postgres.PostgresBackend().insert_new(conn, CONVERSATIONS, rows)
    c = CONVERSATIONS.c
    ids = [row["conversation_id"] for row in rows]
    return {cid: pk for cid, pk in conn.execute(select(c.conversation_id, c.id).where(c.conversation_id.in_(ids)))}
