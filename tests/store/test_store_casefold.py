"""Search folds case the same way on both backends: Unicode case folding, so a final sigma is any sigma."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import text

from core.store import ConversationQuery, Store
from core.store.casefold import fold
from core.store.engine import make_engine, write_transaction
from core.store.schema import _config, upgrade
from tests.store.store_factory import import_texts
from tests.store.store_pg import pg_database

TEXTS = {"upper": "Ο ΣΟΦΟΣ λέει", "lower": "ο σοφος λέει", "long-s": "Meſſage", "micro": "5 µs", "other": "nothing"}


def _found(store: Store, needle: str) -> set[str]:
    return {c.conversation_id for c in store.iter_conversations(ConversationQuery(search=needle))}


@pytest.mark.parametrize(
    "needle,expected",
    [
        ("ς", {"upper", "lower"}),
        ("σοφος", {"upper", "lower"}),
        ("ΣΟΦΟΣ", {"upper", "lower"}),
        ("σοφοσ", {"upper", "lower"}),
        ("φος", {"upper", "lower"}),
        ("message", {"long-s"}),
        ("μs", {"micro"}),
    ],
)
def test_search_finds_a_word_whatever_its_sigmas_and_case_on_both_backends(
    store: Store, needle: str, expected: set[str]
) -> None:
    import_texts(store, TEXTS)
    assert _found(store, needle) == expected


def test_the_fold_is_unicode_case_folding_that_keeps_every_place() -> None:
    assert fold("ΣΟΦΟΣ σοφος") == "σοφοσ σοφοσ"
    assert fold("Straße") == "straße"  # "ss" would move every later character: lowercased instead
    assert len(fold("ẞİ")) == 2


@pytest.mark.postgres
def test_an_upgrade_from_0014_refolds_the_chunks_stored_before() -> None:
    with pg_database() as url:
        with Store.open(url) as store:
            import_texts(store, TEXTS)
        engine = make_engine(url)
        try:
            with write_transaction(engine) as conn:
                command.downgrade(_config(conn), "0014")
                # The chunks as 0014's fold wrote them: each character lowercased, "ς" and "ſ" left as they were.
                conn.execute(text("UPDATE search_chunks SET folded = lower(folded)"))
                conn.execute(text("UPDATE search_chunks SET folded = replace(folded, 'σοφοσ', 'σοφος')"))
                conn.execute(text("UPDATE search_chunks SET folded = replace(folded, 'message', 'meſſage')"))
                conn.execute(text("UPDATE conversations SET title = conversation_id"))  # found by the chunks alone
                folded = "SELECT count(*) FROM search_chunks WHERE folded LIKE '%σοφοσ%' OR folded LIKE '%message%'"
                assert conn.execute(text(folded)).scalar() == 0
            assert upgrade(engine).before == "0014"
        finally:
            engine.dispose()
        with Store.open(url) as store:
            assert _found(store, "ΣΟΦΟΣ") == _found(store, "ς") == {"upper", "lower"}
            assert _found(store, "MESSAGE") == {"long-s"}


def test_only_a_text_without_cased_characters_is_caseless() -> None:
    from core.store.casefold import caseless

    assert caseless("天气") and caseless("42 ☃")
    assert not caseless("天a") and not caseless("σ") and not caseless("ß") and not caseless("ſ")


@pytest.mark.parametrize("needle", ["σοφος", "ΣΟΦΟΣ", "φος", "ος", "ΟΣ", "straße", "ÉCOLE", "é"])
def test_search_folds_a_conversation_id_as_it_folds_message_texts_on_both_backends(store: Store, needle: str) -> None:
    # The needle is folded once; a conversation's own id must be folded the same way, or its final sigma is missed.
    import_texts(store, {"σοφος straße école": "nothing", "other": "nothing"})
    assert _found(store, needle) == {"σοφος straße école"}


@pytest.mark.postgres
def test_the_servers_fold_of_every_character_is_the_search_fold(pg_session_url: str) -> None:
    # The trigger folds a renamed title in SQL; the import and the needle fold in Python: they must agree.
    every = "".join(chr(p) for p in range(1, 0x110000) if not 0xD800 <= p < 0xE000)
    texts = [every[i : i + 4096] for i in range(0, len(every), 4096)] + ["Plain ASCII Title-42", "İI ẞ ſ µ ς"]
    with Store.open(pg_session_url) as store, store.engine.connect() as conn:
        folded = conn.execute(
            text("SELECT traceloupe_fold(t) FROM unnest(CAST(:texts AS text[])) WITH ORDINALITY AS u(t, n) ORDER BY n"),
            {"texts": texts},
        )
        assert list(folded.scalars()) == [fold(t) for t in texts]
