"""SQL-injection strings in every filter and in the search box come back as literal matches.

Each payload is also stored, as message text and as a conversation id, so a literal
match has something to find; the oracle is Python's own substring test. Afterwards
the tables are all still there with the same row counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from core import UnknownNameError
from core.reader import read_bytes
from core.store import ConversationQuery, InvalidQueryError, NewRun, Store
from tests.store.store_pg import BACKENDS, create_pg_database, drop_pg_database, pg_database_url

PAYLOADS = [
    "' OR '1'='1",
    "'; DROP TABLE conversations; --",
    '" OR ""="',
    "1) OR 1=1 --",
    "' UNION SELECT msg_id, body FROM messages --",
    "' AND 1=(SELECT COUNT(*) FROM sqlite_master) --",
    "'; SELECT pg_sleep(5); --",
    "%",
    "_",
    "\\",
    "%_%",
    "\\%",
    "a%b",
    "*",
    "abc*",
    'a" OR "b',
    "NEAR(quick fox)",
    "^start",
    "search_text:needle",
    "]",
    "[x]",
    "$.role",
    "/* comment */",
    "-- ",
    "NULL",
    "\u2028",
    "引号'注入",
]


def _messages() -> list[dict[str, Any]]:
    out = []
    for i, payload in enumerate(PAYLOADS):
        out.append(
            {
                "role": "user",
                "msg_type": "text",
                "content": f"before {payload} after",
                "create_ts": i + 1,
                "msg_id": f"m{i}",
                "conversation_id": payload,
            }
        )
    out.append(
        {
            "role": "user",
            "msg_type": "text",
            "content": "control text",
            "create_ts": 99,
            "msg_id": "ctl",
            "conversation_id": "control",
        }
    )
    return out


@pytest.fixture(scope="module", params=BACKENDS)
def loaded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """One store per backend with every payload imported, shared by this module's read-only tests."""
    if request.param == "sqlite":
        url = str(tmp_path_factory.mktemp("injection") / "store.db")
        name = None
    else:
        name = create_pg_database()
        url = pg_database_url(name)
    data = b"".join(orjson.dumps(m) + b"\n" for m in _messages())
    with Store.open(url) as store:
        store.import_records(read_bytes(data, source="payloads.jsonl"), source="payloads.jsonl")
        yield store
    if name is not None:
        drop_pg_database(name)


def _oracle(needle: str) -> set[str]:
    needle = needle.strip()
    return {m["conversation_id"] for m in _messages() if needle.lower() in m["content"].lower()}


@pytest.mark.parametrize("payload", PAYLOADS)
def test_search_box_is_literal(loaded: Store, payload: str) -> None:
    found = {c.conversation_id for c in loaded.iter_conversations(ConversationQuery(search=payload))}
    assert found == _oracle(payload)
    assert payload.strip() == "" or found  # each payload is stored, so a literal match always finds it


@pytest.mark.parametrize("payload", PAYLOADS)
def test_kind_filter_is_literal(loaded: Store, payload: str) -> None:
    assert list(loaded.iter_conversations(ConversationQuery(kind=payload))) == []
    assert {c.conversation_id for c in loaded.iter_conversations(ConversationQuery(kind="user:text"))} == {
        *PAYLOADS,
        "control",
    }


@pytest.mark.parametrize("payload", PAYLOADS)
def test_conversation_id_is_literal(loaded: Store, payload: str) -> None:
    # Runs are written here, so each payload uses its own idempotency key and the counts test ignores runs.
    detail = loaded.get_conversation(payload)
    assert [m.msg_id for m in detail.messages] == [f"m{PAYLOADS.index(payload)}"]
    assert [b["conversation_id"] for b in loaded.export_bodies(payload)] == [payload]
    run = loaded.start_run(
        NewRun(payload, provider=payload, model=payload, request_body={"q": payload}, idempotency_key=payload)
    )
    runs, _ = loaded.list_runs(payload)
    assert [r.run_id for r in runs] == [run.run_id]
    assert (runs[0].provider, runs[0].request_body) == (payload, {"q": payload})
    assert all(r.conversation_id != "control" for r in loaded.list_runs("control")[0])
    with pytest.raises(UnknownNameError):
        loaded.get_conversation(payload + "'")


@pytest.mark.parametrize("payload", PAYLOADS)
def test_sort_and_cursor_come_from_the_allowlist(loaded: Store, payload: str) -> None:
    with pytest.raises(InvalidQueryError):
        loaded.list_conversations(ConversationQuery(sort=payload))
    with pytest.raises(InvalidQueryError):
        loaded.list_conversations(ConversationQuery(cursor=payload))
    with pytest.raises(InvalidQueryError):
        loaded.list_runs(cursor=payload)


def test_tables_survive_the_payloads(loaded: Store) -> None:
    for payload in PAYLOADS:
        list(loaded.iter_conversations(ConversationQuery(search=payload, kind=payload, has_runs=False)))
    assert loaded.counts() == {
        "conversations": len(PAYLOADS) + 1,
        "messages": len(PAYLOADS) + 1,
        "conversation_kinds": len(PAYLOADS) + 1,
        # Runs come from test_conversation_id_is_literal, which may or may not have run in this process.
        "runs": len(loaded.list_runs(limit=500)[0]),
        "step_runs": 0,
    }
