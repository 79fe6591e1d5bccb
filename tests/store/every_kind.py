"""A store holding every kind of record an export carries, each column set somewhere, through the store's own API."""

from __future__ import annotations

from typing import Any

import orjson

from core.reader import StoreLine, read_bytes
from core.replay.answers import parse_comparison
from core.store import NewRun, Store, TokenUsage
from core.store.step_runs import NewStepRun, StepView
from core.store.suite_items import ItemResult, Spend, claim_item, finish_item
from core.suites import Suites
from tests.store.store_factory import dataset


def _step(index: int, **values: Any) -> StepView:
    given: dict[str, Any] = {"verdict": "same", "status": "ok", "error": None, **values}
    return StepView(
        index=index, recorded_msg_id=f"m{index}", reason="same tool calls",
        detail={"args": {"b": 2, "a": [1, 1.5, None]}},
        request_body={"model": "m", "messages": [{"role": "user", "content": "文字"}]},
        response_body={"id": "resp", "choices": []}, reply={"role": "assistant", "content": "ok"}, latency_ms=12,
        input_tokens=10, output_tokens=5, cached_tokens=2, reasoning_tokens=1, cost_usd=0.0125,
        cost_note="priced at list price", estimate={"input": 9}, **given,
    )  # fmt: skip


def fill_every_kind(store: Store) -> None:
    """Messages of three conversations, runs, step runs with steps, two suites, suite runs (one the other's baseline)
    with their items: every column of every exported table holds a value in some row."""
    messages = dataset(seed=21, conversations=3, turns=2, records=3)
    ids = sorted({m["conversation_id"] for m in messages})
    contexts = _request_contexts(ids[0], next(m["msg_id"] for m in messages if m["conversation_id"] == ids[0]
                                              and m["role"] == "user"))  # fmt: skip
    text = b"".join(orjson.dumps(m) + b"\n" for m in [*messages, *contexts])
    lines: list[StoreLine] = []
    store.import_records(
        read_bytes(text, source="fill.jsonl", store_lines=lines), source="fill.jsonl", store_lines=lines
    )

    ok = store.start_run(
        NewRun(ids[0], provider="openai", model="gpt-x", request_body={"z": 1, "a": {"y": [2]}}, up_to_msg_id="m1",
               started_at=2 * 10**12, idempotency_key="run-key", started_by="reviewer")
    )  # fmt: skip
    store.finish_run(
        ok.run_id, status="ok", response_body={"choices": [{"message": {"content": "hi"}}]},
        usage=TokenUsage(input_tokens=3, output_tokens=4, total_tokens=7, raw={"u": 1}),
        reply={"role": "assistant", "msg_type": "text", "content": "hi"}, finished_at=2 * 10**12 + 50,
    )  # fmt: skip
    failed = store.start_run(NewRun(ids[1], provider="anthropic", model="claude", request_body={}))
    store.finish_run(failed.run_id, status="error", error="HTTP 500 from the provider")

    for n, conversation in enumerate(ids[:2]):
        new = NewStepRun(
            conversation, turn_msg_id=f"turn-{n}", provider="openai", model="gpt-x", recorded_steps=2, max_steps=5,
            max_cost=1.5, idempotency_key=f"steps-key-{n}", comparison="similar:0.6",
            tools_source=("stored", "inferred")[n],
            tools=[{"name": "lookup", "description": "Ünïcode", "parameters": {"type": "object", "properties": {}}}],
            tool_choice=({"name": "lookup"}, "auto")[n], started_by="reviewer",
            params=({"max_tokens": 300, "stop": ["Ünï"]}, None)[n],
        )  # fmt: skip
        run, _ = store.claim_step_run(new)
        store.add_step(run.run_id, _step(1))
        store.add_step(run.run_id, _step(2, verdict="failed", status="error", error="HTTP 429"))
        store.finish_step_run(run.run_id, status="diverged", reason="different_tool", diverged_at="m2", error="late")

    suites = Suites(store)
    suites.create("nightly", conversations=ids)
    suites.create("one", conversations=[ids[2]])
    first = suites.new_run("nightly", provider="openai", model="gpt-x", mode="steps", concurrency=2, max_cost=3.0)
    _finish_items(suites, first.run_id)
    second = suites.new_run(
        "nightly",
        provider="openai",
        model="gpt-y",
        baseline=first.run_id,
        comparison=parse_comparison("exact"),
        cross_baseline=True,
    )
    _finish_items(suites, second.run_id)
    # Left running: its item is pending.
    suites.claim_run("one", provider="gemini", model="g", idempotency_key="form-key", started_by="admin")


def _request_contexts(conversation_id: str, turn: str) -> list[dict[str, Any]]:
    """A context for the whole conversation and one for a turn, every field set in one of them."""
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    whole = {
        "conversation_id": conversation_id, "provider": "anthropic", "model": "claude",
        "tools": [{"name": "lookup", "description": "Find", "input_schema": schema}], "tool_choice": "auto",
        "params": {"max_tokens": 256, "temperature": 0.5, "top_p": 0.9, "stop": ["END"], "thinking": False},
    }  # fmt: skip
    own = {"conversation_id": conversation_id, "turn": turn, "tools": [], "tool_choice": "none"}
    return [{"traceloupe_request": whole}, {"traceloupe_request": own}]


def _finish_items(suites: Suites, run_id: str) -> None:
    for position, item_pk in enumerate(suites.open_items(run_id)):
        claim = claim_item(suites.store.engine, item_pk)
        assert claim is not None
        result = ItemResult(
            outcome="diverged" if position else "matched", run_id=f"replay-{run_id}-{position}", diverged_step=2,
            diverged_at="m2", reason="different_answer", error="none",
            spend=Spend(input_tokens=5, output_tokens=6, cost_usd=0.5, cost_note="list price"),
            detail={"comparison": "exact", "score": 0.0},
        )  # fmt: skip
        assert finish_item(suites.store.engine, claim, result)
    suites.finish_if_done(run_id)
