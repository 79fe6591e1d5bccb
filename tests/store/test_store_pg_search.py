"""PostgreSQL's search chunks: a fold that keeps every character's place, chunks that hold every short needle."""

from __future__ import annotations

import random
import string

import orjson
import pytest
from alembic import command
from sqlalchemy import ARRAY, Column, Integer, MetaData, Table, Text, func, inspect, select, text

from core.reader import read_bytes
from core.store import ConversationQuery, Store
from core.store.bulk import copy_rows, text_array
from core.store.engine import make_engine, read_transaction, write_transaction
from core.store.pg_search import MAX_NEEDLE, SEARCH_CHUNKS, STRIDE, chunk_rows, fold, gram_array, with_grams
from core.store.query import search_condition
from core.store.schema import _config, upgrade
from core.store.tables import CONVERSATIONS
from tests.store.store_factory import import_texts
from tests.store.store_pg import BACKENDS, pg_database


@pytest.mark.parametrize("text", ["ΟΔΟΣ ΣΟΦΙΑ", "İstanbul", "Straße ÉCOLE", "MiXeD ascii", "北京 ДОБРЫЙ"])
def test_the_fold_lowercases_each_character_in_its_place(text: str) -> None:
    folded = fold(text)
    assert len(folded) == len(text)
    assert folded == "".join(fold(c) for c in text)  # no character's fold depends on its neighbours
    assert folded == folded.lower() or "İ" in text  # "İ".lower() is two characters: it is left as it is


def test_a_final_sigma_folds_as_any_sigma() -> None:
    assert fold("ΟΔΟΣ") == "οδοσ" and fold("Σ") == "σ"


def test_every_needle_up_to_the_limit_lies_whole_in_one_chunk() -> None:
    text = "".join(random.Random(5).choices(string.ascii_letters + "äÖ ", k=3 * STRIDE + 100))
    chunks = [row["folded"] for row in chunk_rows(1, 1, text)]
    folded = fold(text)
    for start in range(0, len(text) - MAX_NEEDLE, 97):
        needle = folded[start : start + MAX_NEEDLE]
        seq = start // STRIDE
        assert chunks[seq].find(needle) == start - seq * STRIDE


def test_an_empty_text_has_one_empty_chunk() -> None:
    assert [row["folded"] for row in chunk_rows(7, 3, "")] == [""]


@pytest.mark.postgres
def test_an_upgrade_from_0012_cuts_the_chunks_of_what_was_stored_before() -> None:
    """A PostgreSQL store of revision 0012 searched ``messages`` itself: the upgrade writes every message's chunks."""
    filler = "plain words " * (3 * STRIDE // 12)
    with pg_database() as url:
        with Store.open(url) as store:
            import_texts(store, {"long": filler + "Hidden Deep", "short": "hidden deep too", "other": "nothing"})
        engine = make_engine(url)
        try:
            with write_transaction(engine) as conn:
                command.downgrade(_config(conn), "0012")
                assert not conn.execute(text("SELECT to_regclass('search_chunks')")).scalar()
            assert upgrade(engine).before == "0012"
        finally:
            engine.dispose()
        with Store.open(url) as store:
            found = {c.conversation_id for c in store.iter_conversations(ConversationQuery(search="HIDDEN deep"))}
            assert found == {"long", "short"}
            with store.engine.connect() as conn:
                chunks = conn.execute(select(func.count()).select_from(SEARCH_CHUNKS)).scalar_one()
            assert chunks == len(list(chunk_rows(0, 0, filler + "Hidden Deep"))) + 2


def test_a_chunk_carries_each_of_its_grams_once() -> None:
    (row,) = [with_grams(row) for row in chunk_rows(1, 1, "Abab 北京北京")]
    pairs = {"a", "b", " ", "北", "京", "ab", "ba", "b ", " 北", "北京", "京北"}
    assert sorted(row["grams"]) == sorted(pairs | {"abab ", " 北京北京"})  # and the 5-grams at places 0 and 4


SHORT_NEEDLES = ("北京", "京", "ox", "O", '{"', "\\,", "zz")
"""Two CJK characters, a short word, characters COPY's array format must quote, and one found nowhere."""


def _found(url: str) -> dict[str, set[str]]:
    with Store.open(url) as store:
        return {
            needle: {c.conversation_id for c in store.iter_conversations(ConversationQuery(search=needle))}
            for needle in SHORT_NEEDLES
        }


def _grams_by_conversation(url: str) -> dict[str, list[list[str]]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            query = text(
                "SELECT c.conversation_id, s.grams FROM search_chunks s "
                "JOIN conversations c ON c.id = s.conversation_pk ORDER BY s.message_pk, s.seq"
            )
            found: dict[str, list[list[str]]] = {}
            for cid, grams in conn.execute(query):
                found.setdefault(cid, []).append(sorted(grams))
            return found
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_grams_written_by_the_migration_and_by_the_import_find_the_same_short_needles() -> None:
    """Revision 0025 fills the chunks stored before from SQL; the import writes its own from Python: both agree."""
    texts = {"beijing": "欢迎来到北京", "word": "an OX ran", "marks": 'a {"b\\, c}', "none": "nothing here"}
    with pg_database() as url:
        with Store.open(url) as store:
            import_texts(store, texts)
        imported = _found(url)
        assert imported == {
            "北京": {"beijing"},
            "京": {"beijing"},
            "ox": {"word"},
            "O": {"word", "none"},
            '{"': {"marks"},
            "\\,": {"marks"},
            "zz": set(),
        }
        engine = make_engine(url)
        try:
            with write_transaction(engine) as conn:
                command.downgrade(_config(conn), "0023")
            assert upgrade(engine).before == "0023"
        finally:
            engine.dispose()
        assert _found(url) == imported  # the migration's grams answer as the import's did
        migrated = _grams_by_conversation(url)
        with Store.open(url) as store:
            import_texts(store, {f"again-{cid}": body for cid, body in texts.items()})
        again = _grams_by_conversation(url)
        assert {cid: again[f"again-{cid}"] for cid in texts} == {cid: migrated[cid] for cid in texts}
        assert _found(url) == {needle: found | {f"again-{cid}" for cid in found} for needle, found in imported.items()}


@pytest.mark.postgres
@pytest.mark.parametrize(
    "values",
    [
        [],
        ["a"],
        ["北京", "é"],
        ['"'],
        ["a", 'b"'],
        ["a", "b\\"],
        ['"', "\\", '\\"', ",", "{", "}", " ", "NULL", "null", "\t", "\n", "'"],
    ],
)
def test_a_text_array_written_by_copy_reads_back_as_its_values(pg_session_url: str, values: list[str]) -> None:
    """The grams travel in COPY's text format as an array literal made by hand (``core.store.bulk.text_array``)."""
    table = Table("arrays", MetaData(), Column("id", Integer), Column("a", ARRAY(Text)))
    engine = make_engine(pg_session_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE TEMPORARY TABLE arrays (id integer, a text[]) ON COMMIT DROP"))
            copy_rows(conn, table, [{"id": 1, "a": text_array(values)}])
            assert conn.execute(select(table.c.a)).scalar_one() == values
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_gram_arrays_are_written_in_the_order_their_index_sorts_them(pg_session_url: str) -> None:
    """The grams' literal is sorted as the ``C`` collation sorts (the GIN index then finds it sorted)."""
    grams = ["북", "é", "b", "ab", "a", "😀", "z"]
    engine = make_engine(pg_session_url)
    try:
        with engine.connect() as conn:
            ordered = text('SELECT array_agg(g ORDER BY g COLLATE "C") FROM unnest(CAST(:a AS text[])) g')
            server = conn.execute(ordered, {"a": grams})
            assert gram_array(grams) == text_array(server.scalar_one()) == '{"a","ab","b","z","é","북","😀"}'
    finally:
        engine.dispose()


TITLED = {
    "ticket-7": "Refund ORDER 42",  # ASCII: the import writes its grams
    "北京-1": "İstanbul",  # the server's trigger fills them, from its own lower()
    "ΣΟΦΟΣ-2": "σοφος nothing",
}
"""Conversation ids and the titles their one message gives them, ASCII or not."""
TITLE_NEEDLES = ("t-", "42", "Or", "北京", "σ-", "ς", "İ", "i", "zz")
"""Needles of one or two characters: some only in an id, where no message has them."""


def _title_found(url: str) -> dict[str, set[str]]:
    """What the indexes alone give for each of ``TITLE_NEEDLES`` (the way a rare needle takes past the walk)."""
    with Store.open(url) as store, read_transaction(store.engine) as conn:
        return {
            needle: set(
                conn.execute(select(CONVERSATIONS.c.conversation_id).where(search_condition(conn, needle))).scalars()
            )
            for needle in TITLE_NEEDLES
        }


def _stored_and_server_grams(url: str, fold: str = "traceloupe_fold") -> list[tuple[set[str], set[str]]]:
    """Each conversation's stored grams beside those of the server's ``fold`` of its id and title."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    f"SELECT g.grams, traceloupe_grams({fold}(c.conversation_id)) || traceloupe_grams({fold}(c.title)) "
                    "FROM conversations c LEFT JOIN conversation_grams g ON g.conversation_pk = c.id"
                )
            ).all()
        return [(set(stored or ()), set(server)) for stored, server in rows]
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_conversation_grams_written_by_the_import_are_those_the_server_gives_its_id_and_title(
    pg_session_url: str,
) -> None:
    with Store.open(pg_session_url) as store:
        with store.engine.begin() as conn:
            conn.execute(text("TRUNCATE conversations, messages RESTART IDENTITY CASCADE"))
        import_texts(store, TITLED)
        earlier = {"role": "user", "msg_type": "text", "content": "an Earlier question", "create_ts": 0,
                   "msg_id": "m0", "conversation_id": "ticket-7"}  # fmt: skip
        store.import_records(read_bytes(orjson.dumps(earlier), source="e"), source="e")
        assert store.get_summary("ticket-7").title == "an Earlier question"
    pairs = _stored_and_server_grams(pg_session_url)
    assert len(pairs) == 3 and all(stored == server for stored, server in pairs)  # the new title's, not the first's
    with Store.open(pg_session_url) as store, store.engine.connect() as conn:
        titles = conn.execute(text("SELECT folded_title FROM conversation_grams ORDER BY conversation_pk")).scalars()
        assert list(titles) == ["an earlier question", "İstanbul", "σοφοσ nothing"]


@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_short_searches_in_ids_and_titles_find_the_same_across_revision_0031(fresh_url: str) -> None:
    """Revision 0031 (PostgreSQL) moves the ids' and titles' grams into a table: a downgrade brings back the
    expression indexes, and what short needles find is the same after the upgrade again."""
    with Store.open(fresh_url) as store:
        import_texts(store, TITLED)
    found = _title_found(fresh_url)
    assert found["t-"] == {"ticket-7"} and found["北京"] == {"北京-1"} and found["σ-"] == {"ΣΟΦΟΣ-2"}
    assert found["zz"] == set()
    engine = make_engine(fresh_url)
    try:
        with write_transaction(engine) as conn:
            command.downgrade(_config(conn), "0030")
            if engine.dialect.name == "postgresql":  # the expression indexes of revision 0020 are back
                indexes = {i["name"] for i in inspect(conn).get_indexes("conversations")}
                assert not inspect(conn).has_table("conversation_grams")
                assert "ix_search_conversations_id_grams" in indexes
        assert upgrade(engine).before == "0030"
    finally:
        engine.dispose()
    assert _title_found(fresh_url) == found
    if fresh_url.startswith("postgresql"):  # the migration's grams are the server's
        assert all(stored == server for stored, server in _stored_and_server_grams(fresh_url))


@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_revision_0032_folds_stored_ids_and_titles_as_the_search_folds_its_needle(fresh_url: str) -> None:
    """Before 0032 PostgreSQL lowercased ids and titles with its own ``lower``, which keeps a final sigma: "ΣΟΦΟΣ" did
    not find the conversation "σοφος". The upgrade refolds what was stored; a downgrade brings ``lower`` back."""
    with Store.open(fresh_url) as store:
        import_texts(store, {"σοφος": "nothing", "other": "nothing"})
    engine = make_engine(fresh_url)
    try:
        with write_transaction(engine) as conn:
            command.downgrade(_config(conn), "0031")
            if engine.dialect.name == "postgresql":
                assert conn.execute(text("SELECT to_regprocedure('traceloupe_fold(text)')")).scalar() is None
        if engine.dialect.name == "postgresql":  # the grams and the indexes as 0031 made them
            assert all(stored == server for stored, server in _stored_and_server_grams(fresh_url, "lower"))
            with engine.connect() as conn:
                definition = conn.execute(text("SELECT indexdef FROM pg_indexes WHERE indexname = :n"),
                                          {"n": "ix_search_conversations_title"}).scalar_one()  # fmt: skip
                assert "lower(title)" in definition
        assert upgrade(engine).before == "0031"
    finally:
        engine.dispose()
    with Store.open(fresh_url) as store:
        assert {c.conversation_id for c in store.iter_conversations(ConversationQuery(search="ΣΟΦΟΣ"))} == {"σοφος"}
        assert {c.conversation_id for c in store.iter_conversations(ConversationQuery(search="ος"))} == {"σοφος"}
    if fresh_url.startswith("postgresql"):
        assert all(stored == server for stored, server in _stored_and_server_grams(fresh_url))
        with Store.open(fresh_url) as store, store.engine.connect() as conn:
            folded = conn.execute(text("SELECT folded_id, folded_title FROM conversation_grams ORDER BY 1")).all()
        assert [tuple(row) for row in folded] == [("other", "nothing"), ("σοφοσ", "nothing")]
