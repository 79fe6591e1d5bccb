"""``traceloupe db``: ``status`` and ``upgrade`` on an empty database, and ``upgrade`` from an older schema keeping
every row (and, on PostgreSQL, applying the job queue's schema once)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from alembic import command
from procrastinate.schema import SchemaManager
from sqlalchemy import JSON, Column, Connection, MetaData, Table, func, insert, select, table, text

from core.jobs import JobSettings
from core.jobs.pg import ProcrastinateQueue
from core.reader import Record, read_bytes
from core.store import ConversationQuery, Store, head_revision, import_prepare, make_engine, resolve_url
from core.store.backend import postgres, sqlite
from core.store.bulk import copy_rows
from core.store.engine import write_transaction
from core.store.import_prepare import PreparedMessage
from core.store.pg_search import SEARCH_CHUNKS, Chunk, piece_chunk_rows
from core.store.schema import _config
from core.store.tables import CONVERSATIONS, MESSAGES, STEP_RUNS
from tests.store.store_factory import dataset
from tests.store.store_pg import BACKENDS, create_pg_database, drop_pg_database, pg_database_url
from tests.store.test_store_runs import MESSAGE
from tests.store.test_store_schema import differences_from_the_models
from web.cli import main


@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_db_upgrade_command(fresh_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    if "://" not in fresh_url:
        Path(fresh_url).touch()  # `db status` reads an existing database only; an empty file is one
    assert main(["db", "status", "--db", fresh_url]) == 0
    assert "schema: empty" in capsys.readouterr().out
    assert main(["db", "upgrade", "--db", fresh_url]) == 0
    assert f"schema upgraded from empty to {head_revision()}" in capsys.readouterr().out
    assert main(["db", "upgrade", "--db", fresh_url]) == 0
    assert "already at" in capsys.readouterr().out
    assert main(["db", "status", "--db", fresh_url]) == 0
    out = capsys.readouterr().out
    assert "conversations: 0" in out
    assert ("quick_check: ok" in out) == ("://" not in fresh_url)


@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_db_upgrade_from_0003_keys_messages_by_conversation(
    fresh_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres, "write_chunks", lambda *written: None)  # as Traceloupe 0003 wrote
    monkeypatch.setattr(sqlite, "write_grams", lambda conn, rows: None)  # (0020's index is not there yet)
    monkeypatch.setattr(sqlite, "_INDEX_CONVERSATIONS", ())  # nor 0020's conversation indexes
    monkeypatch.setattr(postgres, "insert_conversations", _conversations_without_grams)  # nor 0031's column
    _import_with_parsed(monkeypatch)
    engine = make_engine(resolve_url(fresh_url))
    with write_transaction(engine) as conn:
        command.upgrade(_config(conn), "0003")
    old = Store(engine)
    messages = dataset(seed=31, conversations=3, turns=2, records=4)
    old.import_records(read_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages), source="a"), source="a")
    with write_transaction(engine) as conn:  # a run as 0003 stored it (today's insert names later columns)
        conn.execute(
            text(
                "INSERT INTO runs (run_id, conversation_pk, provider, model, status, started_at, request_body) VALUES "
                "('r0', (SELECT id FROM conversations WHERE conversation_id = 's31-c0'), 'openai', 'm', 'running', 1,"
                " '{\"k\": 1}')"
            )
        )
    before = (_counts(old), list(old.iter_conversations()), old.get_conversation_outline("s31-c1"))
    engine.dispose()
    monkeypatch.undo()

    assert main(["db", "upgrade", "--db", fresh_url]) == 0
    assert f"schema upgraded from 0003 to {head_revision()}" in capsys.readouterr().out  # 0004, and what follows
    with Store.open(fresh_url) as store:
        assert (_counts(store), list(store.iter_conversations()), store.get_conversation_outline("s31-c1")) == before
        hits = store.list_conversations(ConversationQuery(search="about s31-c2")).items
        assert [c.conversation_id for c in hits] == ["s31-c2"]  # the search index still points at the rows
        short = store.list_conversations(ConversationQuery(search="c2")).items  # through 0020's grams, filled
        assert [c.conversation_id for c in short] == ["s31-c2"]
        assert len(store.list_runs("s31-c0")[0]) == 1
        with store.engine.connect() as conn:
            assert differences_from_the_models(conn) == []  # the rebuilt table is the one the model describes
        reused = {**messages[0], "conversation_id": "s31-c9", "content": "same msg_id, other conversation"}
        summary = store.import_records(read_bytes(orjson.dumps(reused), source="b"), source="b")
        assert (summary.imported, summary.skipped) == (1, 0)


def _counts(store: Store) -> dict[str, int]:
    """The rows of the tables revision 0003 has (``Store.counts`` also counts later ones)."""
    with store.engine.connect() as conn:
        return {t: conn.execute(select(func.count()).select_from(table(t))).scalar_one() for t in _TABLES_OF_0003}


_TABLES_OF_0003 = ("conversations", "messages", "conversation_kinds", "runs")


@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_db_upgrade_counts_the_step_runs_recorded_before_as_runs_and_status_lists_them(
    fresh_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(resolve_url(fresh_url))
    with write_transaction(engine) as conn:
        command.upgrade(_config(conn), "0014")
    old = Store(engine)
    monkeypatch.setattr(sqlite, "write_grams", lambda conn, rows: None)  # as Traceloupe 0014 wrote
    monkeypatch.setattr(sqlite, "_INDEX_CONVERSATIONS", ())
    monkeypatch.setattr(postgres, "write_chunks", _chunks_without_grams)
    monkeypatch.setattr(postgres, "insert_conversations", _conversations_without_grams)
    _import_with_parsed(monkeypatch)
    old.import_records(read_bytes(MESSAGE, source="a"), source="a")
    monkeypatch.undo()
    with write_transaction(engine) as conn:  # as Traceloupe 0014 recorded a step run: not counted
        pk = conn.execute(text("SELECT id FROM conversations")).scalar_one()
        conn.execute(insert(STEP_RUNS).values(**_STEP_RUN, conversation_pk=pk))
    engine.dispose()
    assert main(["db", "upgrade", "--db", fresh_url]) == 0
    with Store.open(fresh_url) as store:
        (c,) = store.iter_conversations()
        assert (c.runs, c.last_activity) == (1, 7_000)
    capsys.readouterr()
    assert main(["db", "status", "--db", fresh_url]) == 0
    out = capsys.readouterr().out
    assert "runs: 0\n" in out and "step_runs: 1\n" in out


def _import_with_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Imports write ``messages.parsed`` (the body's text), as Traceloupe did before revision 0026 dropped it."""
    prepare = import_prepare._prepare

    def with_parsed(record: Record, postgres: bool, now: int) -> PreparedMessage:
        prepared = prepare(record, postgres, now)
        body = prepared.row["body"]  # PostgreSQL's rows hold the text's UTF-8 bytes
        prepared.row["parsed"] = body.decode() if isinstance(body, bytes) else body
        return prepared

    monkeypatch.setattr(import_prepare, "_prepare", with_parsed)
    columns = (*(c._copy() for c in MESSAGES.c), Column("parsed", JSON, nullable=False))
    monkeypatch.setattr(sqlite, "MESSAGES", Table("messages", MetaData(), *columns))  # PostgreSQL copies each key


def _chunks_without_grams(
    conn: Connection,
    messages: Iterable[tuple[int, int, Iterable[str]]],
    stride: int,
    made: Iterable[tuple[int, int, Sequence[Chunk]]] = (),
) -> None:
    """PostgreSQL's search chunks as Traceloupe wrote them before revision 0025 added their grams."""
    rows = [row for pk, cpk, pieces in messages for row in piece_chunk_rows(pk, cpk, pieces, stride)]
    rows += [
        {"message_pk": pk, "seq": seq, "conversation_pk": cpk, "folded": folded}
        for pk, cpk, chunks in made
        for seq, (folded, _) in enumerate(chunks)
    ]
    if rows:
        copy_rows(conn, SEARCH_CHUNKS, rows)


def _conversations_without_grams(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """PostgreSQL's new conversations as Traceloupe wrote them before revision 0031 added their grams; their ids."""
    postgres.PostgresBackend().insert_new(conn, CONVERSATIONS, rows)
    c = CONVERSATIONS.c
    ids = [row["conversation_id"] for row in rows]
    return {cid: pk for cid, pk in conn.execute(select(c.conversation_id, c.id).where(c.conversation_id.in_(ids)))}


_STEP_RUN = {
    "run_id": "s1", "turn_msg_id": "u", "provider": "openai", "model": "m", "status": "matched",
    "recorded_steps": 1, "max_steps": 3, "started_at": 7_000,
}  # fmt: skip


@pytest.mark.postgres
def test_db_upgrade_from_an_older_schema_applies_the_queue_schema_once(capsys: pytest.CaptureFixture[str]) -> None:
    name = create_pg_database()
    url = pg_database_url(name)
    try:
        engine = make_engine(url)
        with engine.begin() as conn:
            command.upgrade(_config(conn), "0005")  # a database of the Traceloupe before the queue
        engine.dispose()
        assert main(["db", "upgrade", "--db", url]) == 0
        out = capsys.readouterr().out
        assert f"upgraded from 0005 to {head_revision()}" in out and "job queue schema (Procrastinate) applied" in out
        assert main(["db", "upgrade", "--db", url]) == 0
        out = capsys.readouterr().out
        assert f"already at {head_revision()}" in out and "Procrastinate" not in out
        with Store.open(url) as store:
            queue = ProcrastinateQueue(store, JobSettings(embedded_worker=False))
            assert queue.pending() == 0
            queue.stop()
            assert _lane_wake_triggers(store) == 1  # applied with the queue's schema
    finally:
        drop_pg_database(name)


@pytest.mark.postgres
def test_db_upgrade_adds_the_lane_wake_up_to_a_queue_schema_applied_before_it() -> None:
    name = create_pg_database()
    url = pg_database_url(name)
    try:
        engine = make_engine(url)
        with engine.begin() as conn:
            command.upgrade(_config(conn), "0013")
            conn.connection.driver_connection.execute(SchemaManager.get_schema())  # as 0013's upgrade applied it
        engine.dispose()
        assert main(["db", "upgrade", "--db", url]) == 0
        with Store.open(url) as store:
            assert _lane_wake_triggers(store) == 1
    finally:
        drop_pg_database(name)


def _lane_wake_triggers(store: Store) -> int:
    with store.engine.connect() as conn:
        found = conn.execute(
            text("SELECT count(*) FROM pg_trigger WHERE tgname = 'traceloupe_jobs_notify_lane_free_v1'")
        ).scalar_one()
    return int(found)
