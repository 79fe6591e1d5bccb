"""PostgreSQL's search chunks: a fold that keeps every character's place, chunks that hold every short needle."""

from __future__ import annotations

import random
import string

import pytest
from alembic import command
from sqlalchemy import func, select, text

from core.store import ConversationQuery, Store
from core.store.engine import make_engine, write_transaction
from core.store.pg_search import MAX_NEEDLE, SEARCH_CHUNKS, STRIDE, chunk_rows, fold
from core.store.schema import _config, upgrade
from tests.store.store_factory import import_texts
from tests.store.store_pg import pg_database


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
