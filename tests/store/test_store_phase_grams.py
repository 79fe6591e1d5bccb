"""PostgreSQL's sampled 5-grams: a long needle's phases lie in the grams of every text holding it, the server's grams
are the import's, and a search through them finds what a plain scan finds, across revision 0035."""

from __future__ import annotations

import random

import pytest
from alembic import command
from sqlalchemy import select, text

from core.store import ConversationQuery, Store
from core.store.engine import make_engine, read_transaction, write_transaction
from core.store.pg_search import MAX_NEEDLE, STRIDE, chunk_rows, fold
from core.store.phase_grams import MIN_NEEDLE, STEP, WIDTH, phase_grams, sampled_grams, search_grams
from core.store.query import search_condition
from core.store.schema import _config, upgrade
from core.store.tables import CONVERSATIONS
from tests.store.store_factory import import_texts
from tests.store.store_pg import BACKENDS

ALPHABETS = ("ab", "abc 01", "zx0123456789", "北京天气很好", "Straße ÉCOLE ΣΟΦΟΣ", "😀👍🏽a-")
"""Small alphabets, so that needles recur; CJK, emoji, and letters the fold changes."""


def _text(rng: random.Random, length: int) -> str:
    return "".join(rng.choices(rng.choice(ALPHABETS), k=length))


def _needle_at(rng: random.Random, folded: str) -> tuple[int, str]:
    """A random place in ``folded`` and the needle of ``MIN_NEEDLE`` to ``MAX_NEEDLE`` characters starting there."""
    length = rng.randint(MIN_NEEDLE, min(MAX_NEEDLE, len(folded)))
    at = rng.randint(0, len(folded) - length)
    return at, folded[at : at + length]


@pytest.mark.parametrize("seed", range(20))
def test_a_long_needles_phase_lies_in_the_grams_of_the_chunk_holding_it(seed: int) -> None:
    rng = random.Random(seed)
    texts = [_text(rng, rng.randint(MIN_NEEDLE, 40)) for _ in range(20)]
    texts.append(_text(rng, 2 * STRIDE + rng.randint(0, 700)))  # chunks overlapping at multiples of STRIDE
    for whole in texts:
        folded = fold(whole)
        chunks = [row["folded"] for row in chunk_rows(1, 1, whole)]
        places = [_needle_at(rng, folded) for _ in range(30)]
        if len(folded) > STRIDE:  # across each chunk boundary, the needle starting just before it
            places += [(b - k, folded[b - k : b - k + MAX_NEEDLE]) for b in (STRIDE, 2 * STRIDE) for k in (1, 3, 7)]
        for at, needle in places:
            chunk = chunks[at // STRIDE]
            assert needle in chunk
            phases = phase_grams(needle)
            assert set(phases[-at % STEP]) <= search_grams(chunk), (at, needle)


def test_each_phase_of_a_long_needle_has_a_sampled_gram_and_a_shorter_one_is_refused() -> None:
    assert phase_grams("zx0500001") == [["00001", "zx050"], ["x0500"], ["05000"], ["50000"]]
    assert all(len(phase) == 1 for phase in phase_grams("abcdefgh"))
    with pytest.raises(ValueError, match="7 characters"):
        phase_grams("abcdefg")


SERVER_TEXTS = (
    "",
    "a",
    "abcd",
    "abcde",
    "abcdefgh",
    "abcdefghi",
    "北京天气很好今天",
    "😀👍🏽 émoji ok!",
    "x" * 9,
    "é" * 5001,
)
"""Texts of every length around a sampled gram's: ASCII, CJK, emoji, repeated characters, a long multibyte one."""


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_the_servers_grams_of_a_text_are_those_the_import_writes(store: Store) -> None:
    """The trigger that rewrites a renamed conversation's grams calls the server's function: it must agree."""
    with read_transaction(store.engine) as conn:
        for folded in SERVER_TEXTS:
            grams = conn.execute(text("SELECT traceloupe_grams(:t)"), {"t": folded}).scalar_one()
            assert set(grams) == search_grams(folded), folded
            sampled = conn.execute(text("SELECT traceloupe_sampled_grams(:t)"), {"t": folded}).scalar_one()
            assert sorted(sampled) == sorted(folded[at : at + WIDTH] for at in range(0, len(folded) - 4, STEP))
            assert set(sampled) == sampled_grams(folded)


def _scanned(store: Store, texts: dict[str, str], needles: list[str]) -> dict[str, set[str]]:
    """The conversations whose id, title or text holds each needle, found by reading each."""
    with read_transaction(store.engine) as conn:
        titles = dict(conn.execute(select(CONVERSATIONS.c.conversation_id, CONVERSATIONS.c.title)).all())
    own = {cid: [fold(cid), fold(titles[cid]), fold(body)] for cid, body in texts.items()}
    return {needle: {cid for cid, held in own.items() if any(fold(needle) in t for t in held)} for needle in needles}


def _indexed(store: Store, needles: list[str]) -> dict[str, set[str]]:
    """What the indexes alone give for each needle (the way a rare needle takes past the walk)."""
    with read_transaction(store.engine) as conn:
        return {
            needle: set(
                conn.execute(select(CONVERSATIONS.c.conversation_id).where(search_condition(conn, needle))).scalars()
            )
            for needle in needles
        }


def _fuzzed_texts(seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    texts = {f"{_text(rng, rng.randint(3, 14))}-{n}": _text(rng, rng.randint(0, 60)) for n in range(60)}
    texts["long"] = _text(rng, STRIDE + 500)
    return texts


def _long_needles(seed: int, texts: dict[str, str]) -> list[str]:
    """Needles drawn from the texts and ids (folded or not), and random ones of the same alphabets."""
    rng = random.Random(seed + 1000)
    sources = [t for t in (*texts, *texts.values()) if len(t) >= MIN_NEEDLE]
    drawn = []
    for source in rng.sample(sources, 25):
        length = rng.randint(MIN_NEEDLE, min(len(source), 40))
        at = rng.randint(0, len(source) - length)
        drawn.append(source[at : at + length])
    boundary = [texts["long"][STRIDE - k : STRIDE - k + 12] for k in (1, 2, 3, 4, 6)]
    return drawn + boundary + [_text(rng, rng.randint(MIN_NEEDLE, 12)) for _ in range(15)]


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
@pytest.mark.parametrize("seed", range(3))
def test_long_needles_find_through_the_indexes_what_a_scan_finds(store: Store, seed: int) -> None:
    texts = _fuzzed_texts(seed)
    import_texts(store, texts)
    needles = _long_needles(seed, texts)
    found = _indexed(store, needles)
    assert found == _scanned(store, texts, needles)
    assert sum(bool(hits) for hits in found.values()) >= 25


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_a_renamed_conversation_is_found_by_a_long_needle_of_its_new_title(store: Store) -> None:
    """The trigger rewrites the grams of a changed title with the server's function, 5-grams included."""
    import_texts(store, {"ticket-1": "an old title"})
    with write_transaction(store.engine) as conn:
        conn.execute(text("UPDATE conversations SET title = 'Quarterly REPORT zx0500001'"))
    assert _indexed(store, ["report zx0500001", "zx0500001", "report zx0500002"]) == {
        "report zx0500001": {"ticket-1"},
        "zx0500001": {"ticket-1"},
        "report zx0500002": set(),
    }


def _stored_grams(url: str) -> list[tuple[str, set[str]]]:
    """Every stored grams array (chunks, then conversations) beside its folded text."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            chunks = conn.execute(text("SELECT folded, grams FROM search_chunks ORDER BY message_pk, seq")).all()
            own = conn.execute(
                text("SELECT folded_id || chr(10) || folded_title, grams FROM conversation_grams ORDER BY 1")
            ).all()
        return [(folded, set(grams)) for folded, grams in [*chunks, *own]]
    finally:
        engine.dispose()


def _written_by_the_import(folded: str) -> set[str]:
    if "\n" not in folded:
        return search_grams(folded)
    folded_id, folded_title = folded.split("\n", 1)
    return search_grams(folded_id) | search_grams(folded_title)


@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_long_searches_find_the_same_across_revision_0035(fresh_url: str) -> None:
    """Revision 0035 (PostgreSQL) adds the sampled 5-grams to what was stored: a downgrade takes them out, and what
    long needles find is the same after the upgrade again, through grams equal to those the import writes."""
    texts = _fuzzed_texts(7)
    with Store.open(fresh_url) as store:
        import_texts(store, texts)
        needles = _long_needles(7, texts)
        found = _indexed(store, needles)
        assert found == _scanned(store, texts, needles)
    postgres = fresh_url.startswith("postgresql")
    engine = make_engine(fresh_url)
    tables = "('search_chunks', 'conversation_grams')"
    indexes = text(f"SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN {tables}")
    try:
        if postgres:  # the migration drops and builds again the GIN indexes of the tables it rewrites
            with engine.connect() as conn:
                built = set(map(tuple, conn.execute(indexes)))
        with write_transaction(engine) as conn:
            command.downgrade(_config(conn), "0034")
        if postgres:
            assert all(max(map(len, grams), default=0) <= 2 for _, grams in _stored_grams(fresh_url))
            with engine.connect() as conn:
                assert conn.execute(text("SELECT to_regprocedure('traceloupe_sampled_grams(text)')")).scalar() is None
                assert set(conn.execute(text("SELECT traceloupe_grams('abcdefgh')")).scalar_one()) == set(
                    "abcdefgh"
                ) | {"ab", "bc", "cd", "de", "ef", "fg", "gh"}
        assert upgrade(engine).before == "0034"
        if postgres:
            with engine.connect() as conn:
                assert set(map(tuple, conn.execute(indexes))) == built and len(built) >= 7
    finally:
        engine.dispose()
    with Store.open(fresh_url) as store:
        assert _indexed(store, needles) == found
        assert {c.conversation_id for c in store.iter_conversations(ConversationQuery(search=needles[0]))} == found[
            needles[0]
        ]
    if postgres:
        assert all(grams == _written_by_the_import(folded) for folded, grams in _stored_grams(fresh_url))
