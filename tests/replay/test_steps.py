"""Step replay through the real SDKs against the stub: a matched turn, a divergence, parallel calls, a failure,
a cost cap and a damaged turn, for OpenAI, Anthropic and Gemini."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.messages.union import MESSAGE_ADAPTER
from core.providers import get_dialect, provider_named
from core.replay.cost import estimate_call, expected_output
from core.replay.run import prepare
from core.replay.steps import plan_steps, replay_steps, step_request
from core.replay.turns import turn_of
from core.store import Store
from tests.replay.steps_data import (
    CALLS,
    RESULTS,
    STEP_MSG_IDS,
    STEPS_CONVERSATION,
    STEPS_DAMAGED,
    TURN,
    identical_steps,
    script,
    seed_steps,
)
from web.devtools.stub_provider import StubServer

MODELS = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4-20250514", "gemini": "gemini-2.5-flash"}
DIALECTS = list(MODELS)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(str(tmp_path / "steps.db")) as opened:
        seed_steps(opened, tmp_path)
        yield opened


def _results_sent(dialect: str, body: dict[str, Any]) -> dict[str, str]:
    """Tool result text by call id, as the provider received it in one request."""
    found: dict[str, str] = {}
    if dialect == "openai":
        for m in body["messages"]:
            if m["role"] == "tool":
                found[m["tool_call_id"]] = m["content"]
    elif dialect == "anthropic":
        for m in body["messages"]:
            for block in m["content"] if isinstance(m["content"], list) else []:
                if block.get("type") == "tool_result":
                    content = block.get("content")
                    found[block["tool_use_id"]] = content if isinstance(content, str) else content[0]["text"]
    else:
        for c in body["contents"]:
            for part in c["parts"]:
                if "functionResponse" in part:
                    response = part["functionResponse"]
                    found[response["id"]] = response["response"]["output"]
    return found


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_identical_turn_matches_and_feeds_the_recorded_results_under_the_replayed_ids(
    store: Store, stub: StubServer, stub_env: dict[str, str], dialect: str
) -> None:
    model = MODELS[dialect]
    script(stub, model, identical_steps())
    run = replay_steps(store, STEPS_CONVERSATION, dialect, model, environ=stub_env)
    assert (run.status, run.reason, run.diverged_at) == ("matched", None, None)
    assert [s.verdict for s in run.steps] == ["same", "same", "same", "same_final"]
    assert [s.recorded_msg_id for s in run.steps] == STEP_MSG_IDS
    assert run.steps[-1].detail is not None and run.steps[-1].detail["similarity"] == 1.0
    assert len(stub.state.requests) == 4
    # Requests 2 and 3 carry the recorded results byte for byte, keyed to the ids the replay made.
    second = _results_sent(dialect, stub.state.requests[1].body)
    third = _results_sent(dialect, stub.state.requests[2].body)
    assert second == {"call_s1_0": RESULTS["rec-1"]}
    assert third == {"call_s1_0": RESULTS["rec-1"], "call_s2_0": RESULTS["rec-2"]}
    fourth = _results_sent(dialect, stub.state.requests[3].body)
    assert fourth["call_s3_0"] == RESULTS["rec-3a"] and fourth["call_s3_1"] == RESULTS["rec-3b"]
    assert not any(rec in json.dumps(r.body) for r in stub.state.requests[1:] for rec in RESULTS)
    # Tokens and cost from the stub's usage and genai-prices' table.
    assert all(s.input_tokens == 12 and s.cost_usd is not None and s.cost_usd > 0 for s in run.steps)
    assert run.cost_usd == pytest.approx(sum(s.cost_usd or 0 for s in run.steps))
    assert run.input_tokens == 48
    # No stored tools: every step sent those inferred from the turn's recorded calls, and the run says so.
    stored = store.get_step_run(run.run_id)
    assert (stored.tools_source, stored.tool_names) == ("inferred", ["search_flights", "book", "weather", "hotel"])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_different_arguments_at_step_2_diverge_there_with_the_json_diff(
    store: Store, stub: StubServer, stub_env: dict[str, str], dialect: str
) -> None:
    model = MODELS[dialect]
    changed = {"flight": "TP125", "seats": 2, "extras": {"bags": 1, "insurance": False}}
    script(
        stub,
        model,
        [{"text": "", "tool_calls": CALLS[0]}, {"text": "", "tool_calls": [{"name": "book", "arguments": changed}]}],
    )
    run = replay_steps(store, STEPS_CONVERSATION, dialect, model, environ=stub_env)
    assert (run.status, run.reason, run.diverged_at) == ("diverged", "different_arguments", STEP_MSG_IDS[1])
    assert [s.verdict for s in run.steps] == ["same", "diverged"]
    assert run.steps[1].detail is not None
    assert run.steps[1].detail["arguments_diff"] == [
        {"name": "book", "diff": [{"path": "/flight", "op": "changed", "recorded": "TP123", "replayed": "TP125"}]}
    ]
    assert len(stub.state.requests) == 2


@pytest.mark.parametrize("dialect", DIALECTS)
def test_parallel_calls_in_another_order_are_the_same_step(
    store: Store, stub: StubServer, stub_env: dict[str, str], dialect: str
) -> None:
    model = MODELS[dialect]
    steps = identical_steps()
    steps[2] = {"text": "", "tool_calls": list(reversed(CALLS[2]))}
    script(stub, model, steps)
    run = replay_steps(store, STEPS_CONVERSATION, dialect, model, environ=stub_env)
    assert run.status == "matched"
    assert run.steps[2].verdict == "same"
    # The results follow the calls they answer: hotel was the replay's first call this time.
    fourth = _results_sent(dialect, stub.state.requests[3].body)
    assert fourth["call_s3_0"] == RESULTS["rec-3b"] and fourth["call_s3_1"] == RESULTS["rec-3a"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_provider_500_at_step_2_fails_the_run_and_keeps_step_1(
    store: Store, stub: StubServer, stub_env: dict[str, str], dialect: str
) -> None:
    model = MODELS[dialect]
    script(stub, model, [{"text": "", "tool_calls": CALLS[0]}, {"status": 500}])
    run = replay_steps(store, STEPS_CONVERSATION, dialect, model, environ=stub_env)
    assert (run.status, run.reason) == ("failed", "http_error")
    assert [(s.verdict, s.status) for s in run.steps] == [("same", "ok"), ("failed", "http_error")]
    assert run.error is not None and "500" in run.error
    assert store.get_step_run(run.run_id).steps[0].verdict == "same"


def _first_estimate(store: Store, dialect: str, model: str, env: dict[str, str]) -> float:
    """Step 1's estimated cost as ``--max-cost`` holds it (input and output; ``core.replay.cost``)."""
    plan = plan_steps(store, STEPS_CONVERSATION, dialect, model, environ=env)  # the body step 1 sends, tools too
    first, recorded = plan.prepared.body, plan.turn.steps[0].message
    expected = expected_output(MESSAGE_ADAPTER.dump_python(recorded, mode="json"))
    _, _, estimate = estimate_call(get_dialect(dialect), model, first, expected_output=expected)
    assert estimate.usd is not None
    return estimate.usd


@pytest.mark.parametrize("dialect", DIALECTS)
def test_max_cost_stops_before_step_2(store: Store, stub: StubServer, stub_env: dict[str, str], dialect: str) -> None:
    model = MODELS[dialect]
    estimate = _first_estimate(store, dialect, model, stub_env)
    script(stub, model, identical_steps())
    # Step 2's body holds step 1's, so its estimate is larger: with step 1's cost spent it cannot fit.
    run = replay_steps(store, STEPS_CONVERSATION, dialect, model, max_cost=estimate, environ=stub_env)
    assert (run.status, run.reason) == ("capped", "max_cost")
    assert [s.verdict for s in run.steps] == ["same"]
    assert run.error is not None and "step 2 not sent" in run.error and "bytes of the JSON body / 4" in run.error
    assert len(stub.state.requests) == 1
    assert run.cost_usd is not None and run.cost_usd <= estimate


def test_a_step_whose_output_limit_could_pass_max_cost_is_not_sent(
    store: Store, stub: StubServer, stub_env: dict[str, str]
) -> None:
    """Anthropic's body sets max_tokens: the step's worst case is known, and the cap is never passed."""
    model = MODELS["anthropic"]
    body = prepare(store, STEPS_CONVERSATION, "anthropic", model, upto=STEP_MSG_IDS[0], environ=stub_env).body
    _, _, input_only = estimate_call(get_dialect("anthropic"), model, {**body, "max_tokens": 0}, expected_output=0)
    assert input_only.usd is not None
    cap = input_only.usd * 3  # the input fits; its max_tokens of output at 15 USD per million does not
    script(stub, model, [{"text": "x" * 40_000, "tool_calls": CALLS[0]}, *identical_steps()[1:]])
    run = replay_steps(store, STEPS_CONVERSATION, "anthropic", model, max_cost=cap, environ=stub_env)
    assert (run.status, run.reason, run.steps) == ("capped", "max_cost", ())
    assert run.error is not None and "step 1 not sent" in run.error
    assert stub.state.requests == []


def test_the_step_run_summary_shows_the_spend_against_the_cap(
    tmp_path: Path,
    stub: StubServer,
    stub_env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from web.cli import main

    for name, value in stub_env.items():
        monkeypatch.setenv(name, value)
    db = str(tmp_path / "cli.db")
    with Store.open(db) as opened:
        seed_steps(opened, tmp_path)
    script(stub, "gpt-4o", identical_steps())
    argv = ["replay", "--conversation", STEPS_CONVERSATION, "--provider", "openai", "--model", "gpt-4o", "--steps",
            "--max-cost", "0.5", "--db", db]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "step run " in err and " matched" in err and "of --max-cost $0.5" in err
    assert " matched (tools inferred from the recorded calls: an inferred schema can change what a model does)" in err
    assert "tools sent (inferred from the recorded calls): search_flights, book, weather, hotel;" in err


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_turn_holding_a_damaged_record_is_refused_without_a_provider_call(
    store: Store, stub: StubServer, stub_env: dict[str, str], dialect: str
) -> None:
    run = replay_steps(store, STEPS_DAMAGED, dialect, MODELS[dialect], environ=stub_env)
    assert (run.status, run.reason, run.steps) == ("refused", "damaged_record", ())
    assert run.error is not None and "TFROB-299" in run.error
    assert stub.state.requests == []


def test_an_unknown_model_has_no_cost_and_says_why(store: Store, stub: StubServer, stub_env: dict[str, str]) -> None:
    script(stub, "house-model", identical_steps())
    run = replay_steps(store, STEPS_CONVERSATION, "openai", "house-model", environ=stub_env)
    assert run.status == "matched"
    assert run.cost_usd is None and all(s.cost_usd is None for s in run.steps)
    assert run.cost_note is not None and "house-model" in run.cost_note


def test_max_cost_on_an_unpriced_model_sends_nothing(store: Store, stub: StubServer, stub_env: dict[str, str]) -> None:
    run = replay_steps(store, STEPS_CONVERSATION, "openai", "house-model", max_cost=1.0, environ=stub_env)
    assert (run.status, run.reason, run.steps) == ("capped", "price_unknown", ())
    assert stub.state.requests == []


def test_max_steps_stops_the_run_capped(store: Store, stub: StubServer, stub_env: dict[str, str]) -> None:
    script(stub, "gpt-4o", identical_steps())
    run = replay_steps(store, STEPS_CONVERSATION, "openai", "gpt-4o", max_steps=2, environ=stub_env)
    assert (run.status, run.reason, len(run.steps)) == ("capped", "max_steps", 2)


@pytest.mark.parametrize("dialect", [*DIALECTS, "openai-responses", "zhipu"])
def test_the_next_steps_history_builds_step_1s_body_when_nothing_is_appended(store: Store, dialect: str) -> None:
    typed = [m.message for m in store.get_conversation(STEPS_CONVERSATION).messages]
    env = {"OPENAI_API_KEY": "sk-test-12345678", "ANTHROPIC_API_KEY": "sk-test-12345678",
           "GEMINI_API_KEY": "sk-test-12345678", "ZHIPU_API_KEY": "sk-test-12345678"}  # fmt: skip
    turn = turn_of(typed, TURN)
    expected = prepare(store, STEPS_CONVERSATION, dialect, "m", upto=STEP_MSG_IDS[0], environ=env).body
    plan = plan_steps(store, STEPS_CONVERSATION, dialect, "m", environ=env)
    assert plan.prepared.body == expected  # the re-run of step 1's reply offers the turn's tools as step 1 does
    assert step_request(provider_named(dialect), "m", list(turn.before), plan.prepared.tools).body == expected
    assert [len(s.outputs) for s in turn.steps] == [1, 1, 1, 0]


def test_gemini_calls_without_ids_are_answered_step_by_step(
    store: Store, stub: StubServer, stub_env: dict[str, str]
) -> None:
    """Gemini 2 sends no call ids: each step's calls are told apart all the same, and get their own results."""
    model = MODELS["gemini"]
    script(stub, model, [{**step, "call_ids": []} for step in identical_steps()])
    run = replay_steps(store, STEPS_CONVERSATION, "gemini", model, environ=stub_env)
    assert run.status == "matched"
    contents = stub.state.requests[3].body["contents"]
    responses = [p["functionResponse"] for c in contents for p in c["parts"] if "functionResponse" in p]
    outputs = [r["response"]["output"] for r in responses]
    assert outputs == [RESULTS["rec-1"], RESULTS["rec-2"], RESULTS["rec-3a"], RESULTS["rec-3b"]]
    calls = [p["functionCall"] for c in contents for p in c["parts"] if "functionCall" in p]
    assert [c["name"] for c in calls] == ["search_flights", "book", "weather", "hotel"]
    assert len({c.get("id") for c in calls}) == 4 and [r.get("id") for r in responses] == [c.get("id") for c in calls]


@pytest.mark.usefixtures("result_before_call")
def test_a_later_step_failing_preflight_is_not_sent_and_force_sends_it(
    store: Store, stub: StubServer, stub_env: dict[str, str]
) -> None:
    script(stub, "gpt-4.1", identical_steps())
    run = replay_steps(store, STEPS_CONVERSATION, "openai", "gpt-4.1", environ=stub_env)
    assert (run.status, run.reason, [s.verdict for s in run.steps]) == ("refused", "preflight", ["same"])
    assert run.error is not None and run.error.startswith("step 2 not sent: preflight rule result-before-call")
    assert len(stub.state.requests) == 1
    stub.state.steps.clear()
    script(stub, "gpt-4.1", identical_steps())
    forced = replay_steps(store, STEPS_CONVERSATION, "openai", "gpt-4.1", environ=stub_env, force=True)
    # Sent anyway, step 2 is refused by the provider as preflight said it would be (the stub answers as OpenAI).
    assert (forced.status, len(forced.steps), len(stub.state.requests)) == ("failed", 2, 3)
    assert [r["status"] for r in stub.state.refusals] == [400]
