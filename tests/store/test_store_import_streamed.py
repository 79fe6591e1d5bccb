"""A streamed import: batches are written while the file is still being read, in one transaction that an
interruption rolls back whole; a repeat of a message is found across batches; the server's statement timeout
does not cut an import short. On both backends (the timeout: PostgreSQL's)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from sqlalchemy import Connection, event, func, select, text
from sqlalchemy.exc import DBAPIError

from core import InputError
from core.reader import BadMessages, Record, read_bytes
from core.store import ConversationQuery, Store, importer
from core.store.engine import EngineSettings, read_transaction
from core.store.query import search_condition
from core.store.tables import CONVERSATIONS, MESSAGES
from tests.store.store_pg import BACKENDS


def _msg(cid: str, msg_id: str, content: str, ts: int = 1) -> dict[str, Any]:
    return {"role": "user", "msg_type": "text", "content": content, "create_ts": ts, "msg_id": msg_id,
            "conversation_id": cid}  # fmt: skip


def _jsonl(messages: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(m) + b"\n" for m in messages)


def _rows(store: Store) -> tuple[int, int]:
    with read_transaction(store.engine) as conn:
        conversations = conn.execute(select(func.count()).select_from(CONVERSATIONS)).scalar_one()
        return conversations, conn.execute(select(func.count()).select_from(MESSAGES)).scalar_one()


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """Batches of two messages; each entry: the lines of a batch written (on the import's writer thread)."""
    monkeypatch.setattr(importer, "CHUNK", 2)
    written: list[list[int]] = []
    write_batch = importer._write_batch

    def spy(conn: Connection, batch: list[importer.PreparedMessage], *args: Any) -> None:
        write_batch(conn, batch, *args)
        written.append([item.row["line"] for item in batch])

    monkeypatch.setattr(importer, "_write_batch", spy)
    return written


def _wait_for(written: list[list[int]], batches: int) -> None:
    """Until the writer has written that many batches (it writes while the reader goes on)."""
    deadline = time.monotonic() + 30
    while len(written) < batches:
        assert time.monotonic() < deadline, f"{len(written)} batches written, {batches} awaited"
        time.sleep(0.01)


class Stopped(KeyboardInterrupt):
    """Ctrl-C, as it reaches the import from the reader."""


def test_an_import_stopped_midway_leaves_nothing_though_batches_were_written(
    store: Store, small_batches: list[list[int]]
) -> None:
    data = _jsonl([_msg(f"c{i}", "m1", f"question {i}") for i in range(6)])

    def records() -> Iterator[Record]:
        for n, record in enumerate(read_bytes(data, source="big.jsonl")):
            if n == 5:
                _wait_for(small_batches, 2)  # written while the file is read, not after
                raise Stopped
            yield record

    with pytest.raises(Stopped):
        store.import_records(records(), source="big.jsonl")
    assert small_batches == [[1, 2], [3, 4]]
    assert _rows(store) == (0, 0)


ON_POSTGRESQL = pytest.mark.parametrize("db_url", [BACKENDS[1]], indirect=True)
"""PostgreSQL only: SQLite writes each batch in the reading thread (``core.store.batch_writer``)."""


@ON_POSTGRESQL
def test_an_import_stopped_while_a_batch_is_written_leaves_nothing(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C reaches the reader while the writer thread is inside a batch: the writer finishes that batch
    before the transaction rolls back, and nothing stays."""
    monkeypatch.setattr(importer, "CHUNK", 2)
    writing, stopped = threading.Event(), threading.Event()
    write_batch = importer._write_batch

    def held(conn: Connection, *args: Any) -> None:
        writing.set()
        assert stopped.wait(30)
        write_batch(conn, *args)

    monkeypatch.setattr(importer, "_write_batch", held)
    data = _jsonl([_msg(f"c{i}", "m1", f"question {i}") for i in range(6)])

    def records() -> Iterator[Record]:
        for n, record in enumerate(read_bytes(data, source="big.jsonl")):
            if n == 3:
                assert writing.wait(30)
                stopped.set()
                raise Stopped
            yield record

    with pytest.raises(Stopped):
        store.import_records(records(), source="big.jsonl")
    assert _rows(store) == (0, 0)
    store.import_records(read_bytes(data, source="big.jsonl"), source="big.jsonl")  # the store is usable after it
    assert _rows(store) == (6, 6)


def test_a_conflict_found_by_the_writer_reports_the_file_line_and_id_and_stores_nothing(
    store: Store, small_batches: list[list[int]]
) -> None:
    """The writer thread finds a stored version that differs (a unique conflict mid-file): the import raises its
    error, as the reader would have, and rolls back every batch written before it."""
    store.import_records(read_bytes(_jsonl([_msg("c3", "m1", "stored")]), source="a.jsonl"), source="a.jsonl")
    small_batches.clear()
    messages = [_msg(f"c{i}", "m1", f"question {i}") for i in range(3)] + [_msg("c3", "m1", "changed")]
    messages += [_msg(f"d{i}", "m1", f"later {i}") for i in range(20)]
    with pytest.raises(InputError) as caught:
        store.import_records(read_bytes(_jsonl(messages), source="b.jsonl"), source="b.jsonl")
    assert str(caught.value) == (
        "b.jsonl:4 at $.msg_id: message 'm1' of conversation 'c3' differs from the one already stored "
        "(imported from a.jsonl:1); import with --replace to store this version instead"
    )
    assert small_batches == [[1, 2]]  # the batch before it was written (then rolled back), none after it
    assert _rows(store) == (1, 1)
    assert [m.body["content"] for m in store.get_conversation("c3").messages] == ["stored"]


@ON_POSTGRESQL
def test_a_conflict_in_a_batch_is_reported_rather_than_a_bad_line_read_after_it(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader reaches a bad line (and the file's end) while the writer is still on the batch before it, which
    conflicts: the conflict is reported, as when each batch was written before the next line was read."""
    store.import_records(read_bytes(_jsonl([_msg("c1", "m1", "stored")]), source="a.jsonl"), source="a.jsonl")
    monkeypatch.setattr(importer, "CHUNK", 2)
    read_whole = threading.Event()
    write_batch = importer._write_batch

    def after_the_reader(conn: Connection, *args: Any) -> None:
        assert read_whole.wait(30)
        write_batch(conn, *args)

    monkeypatch.setattr(importer, "_write_batch", after_the_reader)
    data = (
        _jsonl([_msg("c0", "m1", "new"), _msg("c1", "m1", "changed")])
        + b"{not json\n"
        + _jsonl([_msg("c2", "m1", "x")])
    )
    bad = BadMessages()

    def records() -> Iterator[Record]:
        yield from read_bytes(data, source="b.jsonl", bad=bad)
        read_whole.set()

    with pytest.raises(InputError) as caught:
        store.import_records(records(), source="b.jsonl", bad=bad)
    assert str(caught.value).startswith("b.jsonl:2 at $.msg_id: message 'm1' of conversation 'c1' differs")
    assert _rows(store) == (1, 1)


def test_an_error_of_the_server_in_the_writer_is_raised_as_it_was_and_stores_nothing(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any exception of the writer thread (here the database refusing a statement) reaches the caller as itself."""
    monkeypatch.setattr(importer, "CHUNK", 2)
    write_batch = importer._write_batch
    calls: list[int] = []

    def failing(conn: Connection, *args: Any) -> None:
        write_batch(conn, *args)
        calls.append(1)
        if len(calls) == 2:
            conn.execute(text("SELECT * FROM no_such_table"))

    monkeypatch.setattr(importer, "_write_batch", failing)
    data = _jsonl([_msg(f"c{i}", "m1", f"question {i}") for i in range(9)])
    with pytest.raises(DBAPIError, match="no_such_table"):
        store.import_records(read_bytes(data, source="f.jsonl"), source="f.jsonl")
    assert _rows(store) == (0, 0)


def test_a_file_read_in_batches_stores_what_a_file_read_whole_does(
    store: Store, small_batches: list[list[int]]
) -> None:
    messages = [_msg("c1", f"m{i}", f"turn {i}", ts=10 - i) for i in range(5)] + [_msg("c2", "m1", "other")]
    summary = store.import_records(read_bytes(_jsonl(messages), source="f.jsonl"), source="f.jsonl")
    assert small_batches == [[1, 2], [3, 4], [5, 6]]
    assert (summary.imported, summary.conversations, summary.new_conversations) == (6, 2, 2)
    c1 = store.get_summary("c1")
    assert (c1.messages, c1.turns, c1.first_ts, c1.title) == (5, 5, 6, "turn 4")
    assert [m.body["content"] for m in store.get_conversation("c1").messages] == [f"turn {i}" for i in range(4, -1, -1)]
    assert len(store.list_conversations(ConversationQuery()).items) == 2


def test_a_message_repeated_in_a_later_batch_is_skipped(store: Store, small_batches: list[list[int]]) -> None:
    messages = [
        _msg("c1", "m1", "hello"),
        _msg("c1", "m2", "world"),
        _msg("c1", "m3", "again"),
        _msg("c1", "m1", "hello"),
    ]
    summary = store.import_records(read_bytes(_jsonl(messages), source="f.jsonl"), source="f.jsonl")
    assert (summary.read, summary.imported, summary.skipped) == (4, 3, 1)
    assert store.get_summary("c1").messages == 3


@pytest.mark.parametrize(("fmt", "first"), [("jsonl", "first at line 1"), ("json", "first at $[0]")])
def test_a_different_message_under_an_id_of_an_earlier_batch_refuses_the_file(
    store: Store, small_batches: list[list[int]], fmt: str, first: str
) -> None:
    messages = [_msg("c1", "m1", "hello"), _msg("c1", "m2", "world"), _msg("c1", "m1", "changed")]
    data = _jsonl(messages) if fmt == "jsonl" else orjson.dumps(messages)
    with pytest.raises(InputError, match="appears twice") as caught:
        store.import_records(read_bytes(data, source=f"f.{fmt}"), source=f"f.{fmt}", replace=True)
    assert first in str(caught.value)
    assert _rows(store) == (0, 0)


def test_a_replaced_message_repeated_in_a_later_batch_is_stored_once(
    store: Store, small_batches: list[list[int]]
) -> None:
    store.import_records(read_bytes(_jsonl([_msg("c1", "m1", "old")]), source="a.jsonl"), source="a.jsonl")
    messages = [_msg("c1", "m1", "new"), _msg("c1", "m2", "world"), _msg("c1", "m1", "new")]
    summary = store.import_records(read_bytes(_jsonl(messages), source="b.jsonl"), source="b.jsonl", replace=True)
    assert (summary.imported, summary.replaced, summary.skipped) == (2, 1, 1)
    assert [m.body["content"] for m in store.get_conversation("c1").messages] == ["new", "world"]
    assert store.get_summary("c1").messages == 2


def test_the_summary_names_the_conversations_past_the_size_asked(store: Store) -> None:
    trace = {"records": [_msg("big", f"r{i}", f"record {i}") for i in range(3)]}
    messages = [{**_msg("big", "m1", "with a trace"), "intermediate_trace": trace}, _msg("small", "m1", "plain")]
    data = _jsonl(messages)
    summary = store.import_records(read_bytes(data, source="f.jsonl"), source="f.jsonl", digest_min_records=3)
    assert summary.digest_due == ("big",)
    again = store.import_records(read_bytes(data, source="f.jsonl"), source="f.jsonl", digest_min_records=3)
    assert again.digest_due == ()  # nothing changed


def test_an_import_outlasts_the_servers_statement_timeout(pg_session_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine sets a statement timeout on every PostgreSQL connection (a request must not hold a worker);
    a statement of an import that takes longer than it still completes."""
    write_batch = importer._write_batch

    def slow(conn: Connection, *args: Any) -> None:
        conn.execute(text("SELECT pg_sleep(1.5)"))  # one statement longer than the timeout below
        write_batch(conn, *args)

    monkeypatch.setattr(importer, "_write_batch", slow)
    cid = f"timeout-{uuid.uuid4().hex}"
    with Store.open(pg_session_url, settings=EngineSettings(statement_timeout_ms=1_000)) as store:
        summary = store.import_records(read_bytes(_jsonl([_msg(cid, "m1", "hi")]), source="f.jsonl"), source="f.jsonl")
        assert summary.imported == 1
        with read_transaction(store.engine) as conn:  # outside an import, the engine's timeout holds
            assert conn.execute(text("SHOW statement_timeout")).scalar_one() == "1s"


def test_every_message_of_every_batch_is_found_by_search_and_a_replaced_one_by_its_new_text(
    store: Store, small_batches: list[list[int]]
) -> None:
    messages = [_msg(f"c{i}", "m1", f"zebra number {i}") for i in range(5)]
    store.import_records(read_bytes(_jsonl(messages), source="a.jsonl"), source="a.jsonl")
    store.import_records(
        read_bytes(_jsonl([_msg("c0", "m1", "okapi instead")]), source="b.jsonl"), source="b.jsonl", replace=True
    )

    def found(needle: str) -> list[str]:
        items = store.list_conversations(ConversationQuery(search=needle)).items
        return sorted(item.conversation_id for item in items)

    assert found("zebra") == ["c1", "c2", "c3", "c4"]
    assert found("okapi") == ["c0"]
    assert found("number 3") == ["c3"]


def test_conversations_created_by_an_import_are_written_once_with_their_figures(store: Store) -> None:
    updated: list[int] = []

    def note(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("UPDATE CONVERSATIONS"):
            updated.append(cursor.rowcount)

    store.import_records(read_bytes(_jsonl([_msg("c0", "m0", "first")]), source="a.jsonl"), source="a.jsonl")
    messages = [_msg(f"c{i}", "m1", f"question {i}", ts=5) for i in range(3)]
    event.listen(store.engine, "after_cursor_execute", note)
    try:
        store.import_records(read_bytes(_jsonl(messages), source="b.jsonl"), source="b.jsonl")
    finally:
        event.remove(store.engine, "after_cursor_execute", note)
    assert sum(updated) == 1  # c0's row, stored before; c1 and c2 are created whole
    assert (store.get_summary("c0").messages, store.get_summary("c0").first_ts) == (2, 1)
    for cid in ("c1", "c2"):
        c = store.get_summary(cid)
        assert (c.messages, c.turns, c.first_ts, c.last_activity) == (1, 1, 5, 5)
        assert c.title == f"question {cid[1:]}"


def _by_the_indexes(store: Store, needle: str) -> list[str]:
    """The conversations the search indexes alone give for ``needle`` (the way a rare word takes past the walk)."""
    with read_transaction(store.engine) as conn:
        stmt = select(CONVERSATIONS.c.conversation_id).where(search_condition(conn, needle))
        return sorted(conn.execute(stmt).scalars())


def test_the_ids_of_conversations_created_in_every_batch_are_in_the_search_indexes(
    store: Store, small_batches: list[list[int]]
) -> None:
    """Each batch indexes the conversations it creates (on SQLite by the import, revision 0029), for long needles
    and for pairs of characters; their messages hold neither."""
    cids = [f"tkt-{i}☃{chr(0x4E00 + i)}" for i in range(5)]
    messages = [_msg(cid, "m1", "tapir") for cid in cids]
    store.import_records(read_bytes(_jsonl(messages), source="a.jsonl"), source="a.jsonl")
    assert len(small_batches) == 3
    for i, cid in enumerate(cids):
        assert _by_the_indexes(store, f"tkt-{i}") == [cid]
        assert _by_the_indexes(store, f"☃{chr(0x4E00 + i)}") == [cid]
    store.import_records(read_bytes(_jsonl([_msg("tkt-9", "m1", "okapi")]), source="b.jsonl"), source="b.jsonl")
    assert _by_the_indexes(store, "tkt-9") == ["tkt-9"]


def test_a_batch_of_ten_times_the_conversations_takes_the_same_statements(store: Store) -> None:
    """The work per row is in bulk statements (executemany, COPY, INSERT ... SELECT), never a statement per row."""
    seen: list[str] = []

    def note(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    def statements(prefix: str, conversations: int) -> int:
        messages = [_msg(f"{prefix}{i}", m, f"question {i}") for i in range(conversations) for m in ("m1", "m2")]
        seen.clear()
        event.listen(store.engine, "before_cursor_execute", note)
        try:
            store.import_records(read_bytes(_jsonl(messages), source="a.jsonl"), source="a.jsonl")
        finally:
            event.remove(store.engine, "before_cursor_execute", note)
        return len(seen)

    assert statements("small-", 4) == statements("large-", 40)
