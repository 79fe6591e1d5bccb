"""Step runs are stored on both backends: started once per key, each step kept as it comes, totals from the steps."""

from __future__ import annotations

import pytest

from core import UnknownNameError
from core.reader import read_bytes
from core.store import ConversationQuery, InvalidQueryError, NewRun, Store
from core.store.step_runs import NewStepRun, StepView
from tests.store.test_store_runs import MESSAGE


@pytest.fixture
def with_conversation(store: Store) -> Store:
    store.import_records(read_bytes(MESSAGE, source="r"), source="r")
    return store


def _new(key: str | None = None) -> NewStepRun:
    return NewStepRun("c", "u", "anthropic", "claude-sonnet-4-20250514", 3, 5, 0.5, key)


def _step(index: int, cost: float | None, note: str | None = None) -> StepView:
    return StepView(
        index=index, recorded_msg_id=f"a{index}", verdict="same", reason=None, detail={"call_ids": {"r": "x"}},
        status="ok", error=None, request_body={"messages": [{"role": "user", "content": "é\u2028"}]},
        response_body={"id": "msg"}, reply={"content": "", "tool_calls": [{"id": "x", "name": "t", "arguments": "{}"}]},
        latency_ms=40, input_tokens=100, output_tokens=7, cached_tokens=90, reasoning_tokens=None, cost_usd=cost,
        cost_note=note,
    )  # fmt: skip


def test_a_step_run_keeps_its_steps_in_order_and_sums_them(with_conversation: Store) -> None:
    run, created = with_conversation.claim_step_run(_new())
    assert created and run.status == "running" and run.steps == ()
    with_conversation.add_step(run.run_id, _step(1, 0.25))
    with_conversation.add_step(run.run_id, _step(2, 0.125))
    done = with_conversation.finish_step_run(run.run_id, status="diverged", reason="extra_calls", diverged_at="a2")
    assert (done.status, done.reason, done.diverged_at) == ("diverged", "extra_calls", "a2")
    assert [s.index for s in done.steps] == [1, 2]
    assert done.steps[0].request_body == {"messages": [{"role": "user", "content": "é\u2028"}]}
    assert (done.input_tokens, done.output_tokens, done.cost_usd) == (200, 14, 0.375)
    assert done.to_json()["steps"][0]["tool_calls"] == [{"name": "t", "arguments": {}}]
    assert [r.run_id for r in with_conversation.list_step_runs("c")] == [run.run_id]


def test_one_unpriced_step_makes_the_total_unknown_with_its_note(with_conversation: Store) -> None:
    run, _ = with_conversation.claim_step_run(_new())
    with_conversation.add_step(run.run_id, _step(1, 0.25))
    with_conversation.add_step(run.run_id, _step(2, None, "no price for model"))
    done = with_conversation.get_step_run(run.run_id)
    assert (done.cost_usd, done.cost_note) == (None, "no price for model")


def test_an_idempotency_key_starts_one_step_run(with_conversation: Store) -> None:
    first, created = with_conversation.claim_step_run(_new("k-1"))
    again, created_again = with_conversation.claim_step_run(_new("k-1"))
    assert (created, created_again, again.run_id) == (True, False, first.run_id)


def test_step_run_misuse_is_refused(with_conversation: Store) -> None:
    with pytest.raises(UnknownNameError):
        with_conversation.claim_step_run(NewStepRun("nope", "u1", "openai", "m", 1, 3))
    run, _ = with_conversation.claim_step_run(_new())
    with pytest.raises(InvalidQueryError):
        with_conversation.finish_step_run(run.run_id, status="running")
    with pytest.raises(UnknownNameError):
        with_conversation.get_step_run("missing")


def test_a_step_run_counts_as_a_run_in_the_list_its_filter_and_last_activity(with_conversation: Store) -> None:
    store = with_conversation
    assert store.list_conversations(ConversationQuery(has_runs=True)).items == ()
    run, _ = store.claim_step_run(_new("k-2"))
    store.claim_step_run(_new("k-2"))  # the same key again: the same run, counted once
    (c,) = store.list_conversations(ConversationQuery(has_runs=True)).items
    assert (c.conversation_id, c.runs, c.last_activity) == ("c", 1, run.started_at)
    assert store.list_conversations(ConversationQuery(has_runs=False)).items == ()
    assert store.counts()["step_runs"] == 1


def test_a_replaced_message_keeps_its_conversation_s_step_runs_counted(with_conversation: Store) -> None:
    store = with_conversation
    run, _ = store.claim_step_run(_new())
    store.start_run(NewRun("c", provider="openai", model="m", request_body={}, started_at=2_000))
    other = MESSAGE.replace(b'"hi"', b'"hello"')
    store.import_records(read_bytes(other, source="r2"), source="r2", replace=True)
    (c,) = store.iter_conversations()
    assert (c.runs, c.last_activity) == (2, run.started_at)


def test_runs_and_step_runs_keep_who_started_them(with_conversation: Store) -> None:
    store = with_conversation
    stepped, _ = store.claim_step_run(NewStepRun("c", "u", "openai", "m", 1, 3, started_by="reviewer"))
    assert store.get_step_run(stepped.run_id).to_json()["started_by"] == "reviewer"
    run = store.start_run(NewRun("c", provider="openai", model="m", request_body={"m": 1}, started_by="admin"))
    done = store.finish_run(run.run_id, status="ok", response_body={}, finished_at=run.started_at + 1)
    assert run.started_by == done.started_by == store.get_run_summary(run.run_id).started_by == "admin"
    anonymous = store.start_run(NewRun("c", provider="openai", model="m", request_body={}))
    assert store.get_run(anonymous.run_id).started_by is None


def test_a_step_run_keeps_the_parameters_it_was_given(with_conversation: Store) -> None:
    store = with_conversation
    params = {"max_tokens": 300, "temperature": 0.25, "stop": ["END", "é\u2028"], "thinking": False, "effort": "low"}
    given, _ = store.claim_step_run(NewStepRun("c", "u", "openai", "m", 1, 3, params=params))
    assert store.get_step_run(given.run_id).params == params
    assert store.get_step_run(given.run_id).to_json()["params"] == params
    plain, _ = store.claim_step_run(NewStepRun("c", "u", "openai", "m", 1, 3, params={}))
    assert store.get_step_run(plain.run_id).params is None
    assert [r.params for r in store.list_step_runs("c")] == [None, params]
