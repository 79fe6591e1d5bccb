"""The list's search at scale: a walk in the list's order for common words, the indexes for rarer ones,
and on PostgreSQL plans made for each search's own text, however often a connection runs it."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from sqlalchemy import event, text

from core.reader import read_bytes
from core.store import ConversationQuery, Store, query
from core.store.settings import EngineSettings


def _import(store: Store, messages: list[dict[str, Any]]) -> None:
    store.import_records(read_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages), source="q"), source="q")


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


def test_a_common_word_fills_its_page_from_the_walk_alone(store: Store) -> None:
    _import(store, [_text(f"c{n}", f"the weather today {n}", n) for n in range(8)])
    seen = _statements(store)
    page = store.list_conversations(ConversationQuery(search="weather", limit=3))
    assert [c.conversation_id for c in page.items] == ["c7", "c6", "c5"]
    assert len([s for s in seen if "ORDER BY" in s]) == 1
    assert store.count_conversations(ConversationQuery(search="weather"), cap=5) == 5
    assert store.count_conversations(ConversationQuery(search="today 3"), cap=5) == 1


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
