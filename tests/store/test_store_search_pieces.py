"""A long message's searchable text stored in pieces (revision 0028): found, shown and forgotten as one text."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from alembic import command
from sqlalchemy import delete, func, select, text

from core.reader import read_bytes
from core.store import ConversationQuery, Store
from core.store.engine import make_engine, read_transaction, write_transaction
from core.store.pg_search import MAX_NEEDLE
from core.store.schema import _config, upgrade
from core.store.search_pieces import PIECE_CHARS, PIECE_STRIDE, PieceCutter, cut, whole
from core.store.tables import CONVERSATIONS, MESSAGE_SEARCH_PIECES, MESSAGES
from tests.store.store_pg import BACKENDS

FILLER = "lorem ipsum dolor sit amet "


def long_text(length: int, marks: dict[int, str]) -> str:
    """Filler text of ``length`` characters with each mark written at its place."""
    chars = list((FILLER * (length // len(FILLER) + 1))[:length])
    for at, mark in marks.items():
        chars[at : at + len(mark)] = mark
    return "".join(chars)


# A word in the third piece only, one across the first boundary, CJK pairs in the second piece only.
MARKS = {
    2 * PIECE_STRIDE + 5000: "zanzibarquokka",
    PIECE_STRIDE - 4: "straddlingword",
    PIECE_STRIDE + 77_000: "猫舌",
}
LENGTH = 2 * PIECE_STRIDE + 20_000


def message(content: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "msg_type": "text", "conversation_id": "long", "msg_id": "m", "create_ts": 1,
            "content": content, **extra}  # fmt: skip


def import_lines(store: Store, messages: list[dict[str, Any]], **options: Any) -> Any:
    data = b"".join(orjson.dumps(m) + b"\n" for m in messages)
    return store.import_records(read_bytes(data, source="t.jsonl"), source="t.jsonl", **options)


def found(store: Store, needle: str) -> list[str]:
    return [c.conversation_id for c in store.iter_conversations(ConversationQuery(search=needle))]


def test_pieces_overlap_so_every_needle_lies_whole_in_the_piece_it_begins_in() -> None:
    content = long_text(LENGTH, MARKS)
    pieces = cut(content)
    assert len(pieces) == 3 and all(len(p) <= PIECE_CHARS for p in pieces)
    assert whole(pieces) == content
    for at in (0, PIECE_STRIDE - MAX_NEEDLE, PIECE_STRIDE - 1, 2 * PIECE_STRIDE - 3, LENGTH - MAX_NEEDLE):
        needle = content[at : at + MAX_NEEDLE]
        k, local = divmod(at, PIECE_STRIDE)
        assert pieces[k][local : local + MAX_NEEDLE] == needle


def test_texts_cut_as_they_come_are_the_pieces_of_their_join() -> None:
    texts = ["", "a" * (PIECE_STRIDE - 3), "bcd", "", "e" * (2 * PIECE_CHARS), "f"]
    cutter = PieceCutter()
    for t in texts:
        cutter.add(t)
    assert list(cutter.done()) == cut("\n".join(t for t in texts if t))
    assert cut("") == [""] and cut("x" * PIECE_STRIDE) == ["x" * PIECE_STRIDE]
    assert cut("x" * (PIECE_STRIDE + 1)) == ["x" * (PIECE_STRIDE + 1), "x"]


@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_a_long_text_stored_in_pieces_is_searched_and_shown_whole(fresh_url: str) -> None:
    content = long_text(LENGTH, MARKS)
    with Store.open(fresh_url) as store:
        import_lines(store, [message(content), message("short one", conversation_id="other", msg_id="s")])
        with read_transaction(store.engine) as conn:
            seqs = conn.execute(select(MESSAGE_SEARCH_PIECES.c.seq).order_by("seq")).scalars().all()
            head = conn.execute(select(func.length(MESSAGES.c.search_text)).where(MESSAGES.c.msg_id == "m")).scalar()
        assert seqs == [1, 2] and head == PIECE_CHARS
        for needle in ("zanzibarquokka", "straddlingword", "猫舌", "猫", "ZANZIBAR"):
            assert found(store, needle) == ["long"], needle
        assert found(store, "short one") == ["other"] and found(store, "nowhere-to-be-seen") == []
        window = store.match_windows(["long"], "zanzibarquokka", 20)["long"]
        assert window.text[window.offset : window.offset + window.length] == "zanzibarquokka"
        assert window.text == content[2 * PIECE_STRIDE + 5000 - 20 :][: len(window.text)]
        assert [m.body["content"] for m in store.get_conversation("long").messages] == [content]


@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_a_replaced_long_message_is_no_longer_found_by_its_old_pieces(fresh_url: str) -> None:
    with Store.open(fresh_url) as store:
        import_lines(store, [message(long_text(LENGTH, MARKS))])
        import_lines(store, [message(long_text(LENGTH, {2 * PIECE_STRIDE + 9: "newmarker"}))], replace=True)
        assert found(store, "zanzibarquokka") == [] and found(store, "猫舌") == []
        assert found(store, "newmarker") == ["long"]
        with write_transaction(store.engine) as conn:  # a conversation's rows go with it (the live ingest does this)
            conn.execute(delete(CONVERSATIONS).where(CONVERSATIONS.c.conversation_id == "long"))
        assert found(store, "newmarker") == []
        with read_transaction(store.engine) as conn:
            assert conn.execute(select(func.count()).select_from(MESSAGE_SEARCH_PIECES)).scalar() == 0


@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_a_downgrade_joins_the_pieces_and_an_upgrade_cuts_them_again(fresh_url: str) -> None:
    content = long_text(LENGTH, MARKS)
    with Store.open(fresh_url) as store:
        import_lines(store, [message(content), message("short one", conversation_id="other", msg_id="s")])
    engine = make_engine(fresh_url)
    try:
        with write_transaction(engine) as conn:
            command.downgrade(_config(conn), "0027")
            lengths = conn.execute(text("SELECT length(search_text) FROM messages ORDER BY id")).scalars().all()
            assert lengths[0] > LENGTH - 10 and lengths[1] == len("short one")
        assert upgrade(engine).before == "0027"
    finally:
        engine.dispose()
    with Store.open(fresh_url) as store:
        for needle in ("zanzibarquokka", "straddlingword", "猫舌"):
            assert found(store, needle) == ["long"], needle
        with read_transaction(store.engine) as conn:
            assert conn.execute(select(func.count()).select_from(MESSAGE_SEARCH_PIECES)).scalar() == 2
