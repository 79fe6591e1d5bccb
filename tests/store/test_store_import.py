"""Import: figures, order, typed messages, all-or-nothing and idempotence, on both backends."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest
from alembic import command
from sqlalchemy import inspect, text

from core import AssistantTextMessage, BaseMessage, InputError, TextMessage
from core.errors import UnknownNameError
from core.reader import read_bytes
from core.store import ConversationQuery, Store
from core.store.engine import make_engine, write_transaction
from core.store.schema import _config, upgrade
from tests.store.store_factory import conversation, count_nested, dataset
from tests.store.store_pg import BACKENDS


def jsonl(messages: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(m) + b"\n" for m in messages)


def import_messages(store: Store, messages: list[dict[str, Any]], source: str = "test.jsonl") -> Any:
    return store.import_records(read_bytes(jsonl(messages), source=source), source=source)


def test_figures_match_the_messages(store: Store) -> None:
    messages = dataset(seed=1, conversations=5, turns=3, records=6)
    summary = import_messages(store, messages)
    assert (summary.read, summary.imported, summary.skipped) == (30, 30, 0)
    assert summary.conversations == summary.new_conversations == 5
    by_conv: dict[str, list[dict[str, Any]]] = {}
    for m in messages:
        by_conv.setdefault(m["conversation_id"], []).append(m)
    assert summary.damaged == sum(count_nested(m)[1] for m in messages)
    listed = {c.conversation_id: c for c in store.iter_conversations()}
    assert set(listed) == set(by_conv)
    for cid, msgs in by_conv.items():
        c = listed[cid]
        assert c.messages == len(msgs)
        assert c.turns == sum(m["role"] == "user" for m in msgs)
        assert c.records == sum(count_nested(m)[0] for m in msgs)
        assert c.damaged == sum(count_nested(m)[1] for m in msgs)
        assert c.damaged > 0  # the factory damages every fifth record
        assert c.first_ts == min(m["create_ts"] for m in msgs)
        first_user = min((m for m in msgs if m["role"] == "user"), key=lambda m: m["create_ts"])
        assert c.title == first_user["content"]
        assert c.runs == 0


def test_conversation_is_ordered_by_create_ts_then_file_position(store: Store) -> None:
    base = {"role": "system", "conversation_id": "c"}
    messages = [
        {**base, "content": "third", "create_ts": 30, "msg_id": "m3"},
        {**base, "content": "first (same ts, earlier in file)", "create_ts": 10, "msg_id": "m1"},
        {**base, "content": "second (same ts, later in file)", "create_ts": 10, "msg_id": "m2"},
    ]
    import_messages(store, messages)
    # A later import of an even earlier message slots in by create_ts.
    import_messages(store, [{**base, "content": "zeroth", "create_ts": 5, "msg_id": "m0"}])
    detail = store.get_conversation("c")
    assert [m.msg_id for m in detail.messages] == ["m0", "m1", "m2", "m3"]


def test_messages_come_back_typed_and_verbatim(store: Store) -> None:
    messages = conversation(random.Random(3), "typed", turns=2, records=5)
    import_messages(store, messages)
    detail = store.get_conversation("typed")
    assert [m.body for m in detail.messages] == sorted(messages, key=lambda m: m["create_ts"])
    user = detail.messages[0]
    assert isinstance(user.message, TextMessage)
    assert user.body["x_agent_extra"] == {"kept": [1, "two", None]}
    records = user.message.intermediate_trace.records
    assert isinstance(records[0], AssistantTextMessage)
    assert type(records[3]) is BaseMessage and records[3].role == "assistant"  # damaged, kept as read
    assert (user.kind, user.role, user.msg_type, user.source) == ("user:text", "user", "text", "test.jsonl")
    assert user.records == 5 and user.damaged == 1


def test_conversation_json_is_the_bodies_as_text_in_order(store: Store) -> None:
    """The unparsed read gives what get_conversation parses: same figures, same bodies, same order."""
    messages = conversation(random.Random(4), "raw", turns=3, records=4)
    messages.append({"role": "system", "conversation_id": "raw", "content": '同 ts, \u2028 \\ "', "create_ts": 1})
    import_messages(store, messages)
    detail = store.get_conversation("raw")
    raw = store.get_conversation_json("raw")
    assert raw.summary == detail.summary
    assert all(isinstance(body, str) for body in raw.bodies)
    assert [orjson.loads(body) for body in raw.bodies] == [m.body for m in detail.messages]
    with pytest.raises(UnknownNameError):
        store.get_conversation_json("nope")


def test_reimport_is_a_noop(store: Store) -> None:
    messages = dataset(seed=2, conversations=4)
    first = import_messages(store, messages)
    before = (store.counts(), list(store.iter_conversations()))
    again = import_messages(store, messages)
    assert (again.imported, again.skipped, again.conversations, again.damaged) == (0, len(messages), 0, 0)
    assert (store.counts(), list(store.iter_conversations())) == before
    assert first.imported == len(messages)


def test_partial_overlap_adds_only_the_new_messages(store: Store) -> None:
    messages = dataset(seed=4, conversations=3, turns=4)
    import_messages(store, messages[:10])
    summary = import_messages(store, messages[5:])
    assert (summary.imported, summary.skipped) == (len(messages) - 10, 5)
    assert store.counts()["messages"] == len(messages)
    fresh_total = sum(c.messages for c in store.iter_conversations())
    assert fresh_total == len(messages)


def test_record_without_msg_id_gets_a_stable_id(store: Store) -> None:
    legacy = {"role": "system", "content": "no id here", "create_ts": 7, "conversation_id": "legacy"}
    assert import_messages(store, [legacy]).imported == 1
    assert import_messages(store, [legacy]).imported == 0
    (stored,) = store.get_conversation("legacy").messages
    assert stored.msg_id.startswith("sha256:") and "msg_id" not in stored.body


def test_bad_record_late_in_a_file_stores_nothing_from_it(store: Store) -> None:
    good = dataset(seed=5, conversations=2)
    import_messages(store, good, source="earlier.jsonl")
    before = store.counts()
    batch = dataset(seed=6, conversations=5)
    bad_line = len(batch) - 1
    batch[bad_line] = {**batch[bad_line], "create_ts": "yesterday"}
    with pytest.raises(InputError) as err:
        import_messages(store, batch, source="late.jsonl")
    assert err.value.source == "late.jsonl" and err.value.line == bad_line + 1
    assert err.value.path == "$.create_ts"
    assert store.counts() == before


def test_timestamps_beyond_64_bits_are_bad_input(store: Store) -> None:
    huge = {"role": "system", "content": "x", "create_ts": 2**63, "msg_id": "big", "conversation_id": "c"}
    with pytest.raises(InputError, match="64-bit"):
        import_messages(store, [huge])
    assert store.counts()["messages"] == 0


def test_list_figures_follow_new_imports(store: Store) -> None:
    base = {"conversation_id": "grow"}
    import_messages(
        store, [{**base, "role": "user", "msg_type": "text", "content": "later", "create_ts": 50, "msg_id": "b"}]
    )
    import_messages(
        store, [{**base, "role": "user", "msg_type": "text", "content": "earlier", "create_ts": 20, "msg_id": "a"}]
    )
    (c,) = store.iter_conversations()
    assert (c.title, c.turns, c.first_ts, c.last_activity) == ("earlier", 2, 20, 50)
    assert store.list_conversations(ConversationQuery(kind="user:text")).items[0].conversation_id == "grow"


@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_an_upgrade_past_0026_keeps_every_message_as_stored_without_its_second_copy(fresh_url: str) -> None:
    """Revision 0026 drops ``messages.parsed`` (read by nothing): the messages stored before read back, export and
    search as they did; a downgrade fills the column again from ``body``."""
    messages = dataset(seed=26, conversations=3, turns=2, records=4)
    messages.append({"role": "user", "conversation_id": "odd", "content": "keys out of order", "create_ts": 1,
                     "msg_type": "text", "x_agent_extra": {"kept": [1, "two", None]}})  # fmt: skip
    with Store.open(fresh_url) as store:
        import_messages(store, messages)
        before = list(store.export_texts())
    engine = make_engine(fresh_url)
    try:
        with write_transaction(engine) as conn:
            command.downgrade(_config(conn), "0025")
            filled = conn.execute(text("SELECT count(*) FROM messages WHERE parsed IS NOT NULL")).scalar_one()
            assert filled == len(messages)
        assert upgrade(engine).before == "0025"
        with engine.connect() as conn:
            assert "parsed" not in {c["name"] for c in inspect(conn).get_columns("messages")}
    finally:
        engine.dispose()
    with Store.open(fresh_url) as store:
        assert list(store.export_texts()) == before and len(before) == len(messages)
        assert store.get_conversation("odd").messages[0].body["x_agent_extra"] == {"kept": [1, "two", None]}
        found = [c.conversation_id for c in store.iter_conversations(ConversationQuery(search="out of order"))]
        assert found == ["odd"]
        import_messages(store, [{**messages[-1], "msg_id": "later", "create_ts": 2}])  # the import writes on
        assert len(store.get_conversation("odd").messages) == 2
