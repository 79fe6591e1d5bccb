"""The list's search at scale: a walk in the list's order for common words, the indexes for rarer ones,
and on PostgreSQL plans made for each search's own text, however often a connection runs it."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from sqlalchemy import event, select, text

from core.reader import read_bytes
from core.store import ConversationQuery, Store, query
from core.store.engine import read_transaction
from core.store.grams import MAX_GRAM, token
from core.store.query import search_condition
from core.store.settings import EngineSettings
from core.store.tables import CONVERSATIONS


def _import(store: Store, messages: list[dict[str, Any]], *, replace: bool = False) -> None:
    data = b"".join(orjson.dumps(m) + b"\n" for m in messages)
    store.import_records(read_bytes(data, source="q"), source="q", replace=replace)


def _text(cid: str, content: str, ts: int) -> dict[str, Any]:
    return {"role": "user", "msg_type": "text", "content": content, "create_ts": ts, "msg_id": f"{cid}-{ts}",
            "conversation_id": cid}  # fmt: skip


def _found(store: Store, needle: str) -> list[str]:
    return [c.conversation_id for c in store.iter_conversations(ConversationQuery(search=needle, limit=2))]


def _statements(store: Store) -> list[str]:
    seen: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    return seen


def test_a_rare_match_past_the_walk_is_found_through_the_indexes(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(query, "WALK", 2)
    _import(store, [_text(f"filler-{n}", "nothing to see", 100 + n) for n in range(6)])
    _import(store, [_text("INC-4711", "今天天气很好", 1), _text("other", "Refund for order 42", 2)])
    seen = _statements(store)
    assert _found(store, "天气") == ["INC-4711"]  # a 2-character CJK word
    assert _found(store, "INC-47") == ["INC-4711"]  # its id
    assert _found(store, "refund for") == ["other"]  # its title and text
    assert _found(store, "qq") == []
    assert sum("ORDER BY" in s for s in seen) >= 8  # each search walked, then asked the indexes


def _explained(store: Store, needle: str) -> str:
    """The plan of the indexes' way to a search (the one a rare needle takes past the walk)."""
    with read_transaction(store.engine) as conn:
        stmt = select(CONVERSATIONS.c.id).where(search_condition(conn, needle))
        sql = str(stmt.compile(conn, compile_kwargs={"literal_binds": True}))
        prefix = "EXPLAIN QUERY PLAN " if store.backend == "sqlite" else "EXPLAIN (COSTS OFF) "
        if store.backend == "postgresql":
            conn.execute(text("SET LOCAL enable_seqscan = off"))  # a handful of rows: show that an index can serve
        return "\n".join(str(row[-1]) for row in conn.exec_driver_sql(prefix + sql))


@pytest.mark.parametrize(
    ("needle", "found"),
    [("天气", {"a"}), ("q", {"a"}), ("É", {"a"}), ("ok", {"b"}), ("e", {"a", "b"}), ("zz", set()), ("☃x", {"ID-☃X"})],
)
def test_a_short_search_is_answered_by_an_index_of_characters_and_pairs(
    store: Store, needle: str, found: set[str]
) -> None:
    _import(
        store,
        [
            _text("a", "今天天气很好 QUICK école", 1),
            _text("b", "nothing", 2),
            _text("b", "token", 3),
            _text("ID-☃X", "", 4),
        ],
    )
    assert {c.conversation_id for c in store.iter_conversations(ConversationQuery(search=needle))} == found
    plan = _explained(store, needle)
    sqlite = store.backend == "sqlite"
    used = ("message_grams", "conversation_grams") if sqlite else ("chunks_grams", "conversation_grams")
    assert all(index in plan for index in used), plan


def test_a_replaced_message_leaves_the_short_search_index(store: Store) -> None:
    _import(store, [_text("a", "今天天气很好", 1)])
    _import(store, [_text("a", "晴天", 1)], replace=True)
    assert _found(store, "天气") == []
    assert _found(store, "晴") == ["a"]
    if store.backend == "sqlite":  # the index holds the new text's grams only (contentless: told by hand)
        with read_transaction(store.engine) as conn:
            held = "SELECT rowid FROM message_grams WHERE message_grams MATCH ?"
            assert conn.exec_driver_sql(held, (token("天气"),)).all() == []
            assert len(conn.exec_driver_sql(held, (token("晴天"),)).all()) == 1


def test_a_common_word_fills_its_page_from_the_walk_alone(store: Store) -> None:
    _import(store, [_text(f"c{n}", f"the weather today {n}", n) for n in range(8)])
    seen = _statements(store)
    page = store.list_conversations(ConversationQuery(search="weather", limit=3))
    assert [c.conversation_id for c in page.items] == ["c7", "c6", "c5"]
    assert len([s for s in seen if "ORDER BY" in s]) == 1
    assert store.count_conversations(ConversationQuery(search="weather"), cap=5) == 5
    assert store.count_conversations(ConversationQuery(search="today 3"), cap=5) == 1


def _walks(store: Store) -> list[int]:
    """How many conversations each walk of the searches run from now on tests (the LIMIT of the list it takes)."""
    reaches: list[int] = []

    def seen(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool) -> None:
        if ") AS walked" in statement or "IN (SELECT conversations.id" in statement:  # PostgreSQL's form, SQLite's
            reaches.append(context.compiled_parameters[0]["param_1"])

    event.listen(store.engine, "before_cursor_execute", seen)
    return reaches


def test_a_word_missing_from_a_short_first_walk_goes_to_the_indexes(store: Store) -> None:
    _import(store, [_text("old", "a rare word", 1)])
    _import(store, [_text(f"filler-{n}", "nothing to see", 100 + n) for n in range(300)])
    walks = _walks(store)
    assert _found(store, "RARE word") == ["old"]
    assert walks[0] < 300  # a few pages, not every conversation: the rest is the indexes' work, which follows the hits
    assert len(walks) == 1


@pytest.mark.postgres
def test_fifty_searches_on_one_connection_keep_custom_plans(pg_session_url: str) -> None:
    with Store.open(pg_session_url, settings=EngineSettings(pool_size=1)) as store:
        with store.engine.begin() as conn:
            conn.execute(text("TRUNCATE conversations, messages RESTART IDENTITY CASCADE"))
        _import(store, [_text(f"c{n}", f"shared words {n}", n) for n in range(20)])
        for n in range(50):
            store.list_conversations(ConversationQuery(search=f"words {n % 20}"))
        with store.engine.connect() as conn:
            plans = conn.execute(
                text("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE :s"),
                {"s": "%search_chunks%"},
            ).all()
    assert plans, "the driver prepared no search statement: nothing was checked"
    assert all(generic == 0 and custom > 0 for generic, custom in plans), plans


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_postgresql_grams_are_the_characters_and_pairs_the_sqlite_index_holds(store: Store) -> None:
    """Besides them, the sampled 5-grams of long needles (``test_store_phase_grams``)."""
    texts = ["héllo wörld 日本語のテキスト", "", "a", "ab", "xyz" * 2000, "é" * 5000]
    with read_transaction(store.engine) as conn:
        for folded in texts:
            grams = [g for g in conn.execute(text("SELECT traceloupe_grams(:t)"), {"t": folded}).scalar_one()
                     if len(g) <= MAX_GRAM]  # fmt: skip
            pairs = {folded[i : i + 2] for i in range(len(folded) - 1)}
            assert set(grams) == set(folded) | pairs
            assert len(grams) == len(folded) + max(len(folded) - 1, 0)


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
@pytest.mark.parametrize("needle", ["zx0500001", "Ticket ZX0500001 closed"])
def test_a_long_needle_is_answered_by_the_sampled_grams_not_the_trigrams(store: Store, needle: str) -> None:
    """Its trigrams may all be common ("zx0", "000"): the trigram index would read posting lists as long as the
    store. One GIN scan per phase of its sampled 5-grams on each table's grams, OR-ed, then ``LIKE`` on those rows."""
    _import(store, [_text("zx-1", "ticket zx0500001 closed", 1), _text("zx-2", "ticket zx0500002 open", 2)])
    assert _found(store, needle) == ["zx-1"]
    plan = _explained(store, needle)
    assert plan.count("BitmapOr") == 2, plan
    assert "Bitmap Index Scan on ix_search_chunks_grams_column" in plan, plan
    assert "Bitmap Index Scan on ix_search_conversation_grams\n" in plan + "\n", plan
    assert "ix_search_chunks_trgm" not in plan and "ix_search_conversation_grams_" not in plan, plan


def _walk_statements(store: Store) -> list[tuple[str, Any]]:
    """The statements (and their parameters) of the walks the searches run from now on, PostgreSQL's form."""
    walked: list[tuple[str, Any]] = []

    def seen(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool) -> None:
        if ") AS walked" in statement and not statement.startswith("EXPLAIN"):
            walked.append((statement, params))

    event.listen(store.engine, "before_cursor_execute", seen)
    return walked


def _plans(store: Store, statements: list[tuple[str, Any]]) -> list[str]:
    """Each statement's plan, as EXPLAIN prints it."""
    with store.engine.connect() as conn:
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        plans = []
        for statement, params in statements:
            cursor.execute("EXPLAIN " + statement, params)
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return plans


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_a_walk_tests_each_conversation_it_walks_and_never_scans_a_whole_table(store: Store) -> None:
    """The walk's test is a lookup per walked conversation. Left to itself the planner may instead run it once over
    every chunk, hashed (here, a store whose chunks cost less to scan than 200 lookups), and a search past the
    walk would then cost the whole store, which at a million conversations is seconds."""
    _import(store, [_text(f"c{n}", f"filler text {n}", n) for n in range(300)])
    walked = _walk_statements(store)
    assert _found(store, "qj") == []
    assert walked
    for plan in _plans(store, walked):
        assert "hashed SubPlan" not in plan and "Seq Scan on search_chunks" not in plan, plan


def _plan_nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [plan, *(node for child in plan.get("Plans", []) for node in _plan_nodes(child))]


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_a_walk_stops_at_the_page_it_was_asked_for(store: Store) -> None:
    """The walk's rows are tested in the list's order as they come: finding a page of a word in every tenth
    conversation tests about ten conversations per row of the page, not every conversation the walk may reach."""
    _import(store, [_text(f"c{n}", "the word" if n % 10 == 0 else "filler", n) for n in range(400)])
    walked = _walk_statements(store)
    page = store.list_conversations(ConversationQuery(search="word", limit=3))
    assert [c.conversation_id for c in page.items] == ["c390", "c380", "c370"]
    with store.engine.connect() as conn:
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + walked[0][0], walked[0][1])
        nodes = _plan_nodes(cursor.fetchone()[0][0]["Plan"])
    tested = [
        node["Actual Rows"] + node.get("Rows Removed by Filter", 0) for node in nodes if node.get("Alias") == "walked"
    ]
    assert tested and max(tested) <= 40, tested  # 4 matches (the page and one more) lie in the first 31


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_a_walk_reads_each_conversations_id_and_title_from_the_row_it_walks(store: Store) -> None:
    """A walked conversation costs one lookup (its chunks), not a second one of its folded id and title: at a million
    conversations each lookup is a random page or two. The row's own id and title are folded by the server, as the
    search folds them (a non-ASCII capital included)."""
    _import(store, [_text(f"c{n}", f"filler {n}", n) for n in range(30)])
    _import(store, [_text("Ticket-ΣΟΦΊΑ-9", "Ärger mit der Rechnung", 100)])
    walked = _walk_statements(store)
    assert _found(store, "σοφία-9") == ["Ticket-ΣΟΦΊΑ-9"]  # the id, folded
    assert _found(store, "ärger MIT") == ["Ticket-ΣΟΦΊΑ-9"]  # the title (its first message), folded
    assert _found(store, "filler 7") == ["c7"]  # a message's text
    assert walked
    for plan in _plans(store, walked):
        assert "conversation_grams" not in plan, plan
