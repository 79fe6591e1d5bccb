"""Runs: recorded whatever happens, counted on their conversation, idempotent by key."""

from __future__ import annotations

import pytest

from core import UnknownNameError
from core.reader import read_bytes
from core.store import RUN_STATUSES, InvalidQueryError, NewRun, Store, TokenUsage

MESSAGE = b'{"role":"user","msg_type":"text","content":"hi","create_ts":1000,"msg_id":"u","conversation_id":"c"}\n'


@pytest.fixture
def with_conversation(store: Store) -> Store:
    store.import_records(read_bytes(MESSAGE, source="r"), source="r")
    return store


def test_run_lifecycle(with_conversation: Store) -> None:
    store = with_conversation
    run = store.start_run(
        NewRun(
            "c",
            provider="anthropic",
            model="claude",
            request_body={"messages": [1]},
            up_to_msg_id="u",
            started_at=5_000,
        )
    )
    assert (run.status, run.finished_at, run.latency_ms, run.up_to_msg_id) == ("running", None, None, "u")
    done = store.finish_run(
        run.run_id,
        status="ok",
        response_body={"content": "hello"},
        usage=TokenUsage(input_tokens=10, output_tokens=3, total_tokens=13, raw={"in": 10}),
        finished_at=5_250,
    )
    assert (done.status, done.latency_ms, done.usage.total_tokens, done.usage.raw) == ("ok", 250, 13, {"in": 10})
    assert done.response_body == {"content": "hello"} and done.request_body == {"messages": [1]}
    (c,) = store.iter_conversations()
    assert (c.runs, c.last_activity) == (1, 5_000)


def test_a_run_finished_with_the_body_its_caller_holds_is_the_run_as_stored(with_conversation: Store) -> None:
    store = with_conversation
    body = {"messages": [{"role": "user", "content": "hi"}], "model": "m"}
    run = store.start_run(NewRun("c", provider="openai", model="m", request_body=body, started_at=1))
    done = store.finish_run(run.run_id, status="ok", response_body={"id": "r"}, finished_at=9, request_body=body)
    assert done == store.get_run(run.run_id)
    assert (done.request_body, done.latency_ms, done.conversation_id) == (body, 8, "c")


def test_failed_and_timed_out_runs_are_kept(with_conversation: Store) -> None:
    store = with_conversation
    a = store.start_run(NewRun("c", provider="openai", model="m", request_body={}, started_at=1))
    store.finish_run(a.run_id, status="error", error="429 rate limited", finished_at=2)
    b = store.start_run(NewRun("c", provider="openai", model="m", request_body={}, started_at=3))
    store.finish_run(b.run_id, status="timeout", finished_at=60_003)
    runs, cursor = store.list_runs("c")
    assert [(r.status, r.error) for r in runs] == [("timeout", None), ("error", "429 rate limited")]
    assert cursor is None


def test_idempotency_key_returns_the_same_run(with_conversation: Store) -> None:
    store = with_conversation
    first = store.start_run(NewRun("c", provider="openai", model="m", request_body={}, idempotency_key="k1"))
    again = store.start_run(NewRun("c", provider="openai", model="m", request_body={}, idempotency_key="k1"))
    assert again.run_id == first.run_id
    assert store.list_conversations().items[0].runs == 1


def test_run_pages(with_conversation: Store) -> None:
    store = with_conversation
    made = [
        store.start_run(NewRun("c", provider="p", model="m", request_body={"i": i}, started_at=i)).run_id
        for i in range(7)
    ]
    seen: list[str] = []
    cursor = None
    while True:
        page, cursor = store.list_runs(limit=3, cursor=cursor)
        seen.extend(r.run_id for r in page)
        if cursor is None:
            break
    assert seen == list(reversed(made))


def test_run_misuse(with_conversation: Store) -> None:
    store = with_conversation
    with pytest.raises(UnknownNameError):
        store.start_run(NewRun("nope", provider="p", model="m", request_body={}))
    run = store.start_run(NewRun("c", provider="p", model="m", request_body={}))
    with pytest.raises(InvalidQueryError):
        store.finish_run(run.run_id, status="running")  # type: ignore[arg-type]
    with pytest.raises(UnknownNameError):
        store.get_run("missing")
    assert store.list_runs("nope") == ((), None)


def test_every_replay_outcome_can_be_recorded(with_conversation: Store) -> None:
    from typing import get_args

    from core.replay.send import Status

    store = with_conversation
    assert set(get_args(Status)) <= set(RUN_STATUSES)
    for status in get_args(Status):
        run = store.start_run(NewRun("c", provider="p", model="m", request_body={}))
        assert store.finish_run(run.run_id, status=status).status == status


def test_a_conversation_reads_as_its_typed_messages_and_an_unknown_one_is_an_error(with_conversation: Store) -> None:
    (only,) = with_conversation.get_conversation("c").typed
    assert only.msg_id == "u"
    with pytest.raises(UnknownNameError):
        with_conversation.get_conversation("nope")
