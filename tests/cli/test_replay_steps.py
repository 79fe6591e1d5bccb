"""``traceloupe replay --steps``: the issue's JSON, an exit code per outcome, and the step runs ``runs`` lists."""

from __future__ import annotations

import json

import pytest

from tests.replay.steps_data import (
    CALLS,
    FINAL_TEXT,
    STEP_MSG_IDS,
    STEPS_CONVERSATION,
    STEPS_DAMAGED,
    TURN,
    identical_steps,
    script,
)
from web.cli import main
from web.devtools.stub_provider import StubServer


def _cli(db: str, *extra: str) -> list[str]:
    return ["replay", "--db", db, "--conversation", STEPS_CONVERSATION, "--provider", "openai", "--model", "gpt-4o",
            "--steps", *extra]  # fmt: skip


@pytest.mark.usefixtures("cli_env")
def test_the_cli_prints_the_issue_json_and_exits_by_outcome(
    steps_db: str, stub: StubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    db = steps_db
    script(stub, "gpt-4o", identical_steps())
    assert main(_cli(db, "--json", "--turn", TURN)) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("run_id", "kind", "status", "provider", "model", "turn", "diverged_at", "reason", "steps", "tokens",
                "cost_usd"):  # fmt: skip
        assert key in out
    assert (out["kind"], out["status"], out["turn"], out["diverged_at"]) == ("steps", "matched", TURN, None)
    step = out["steps"][0]
    assert {"index", "recorded_msg_id", "verdict", "reason", "tool_calls", "text", "tokens", "cost_usd",
            "latency_ms"} <= set(step)  # fmt: skip
    assert step["tool_calls"] == CALLS[0] and step["tokens"]["input"] == 12
    assert out["steps"][-1]["text"] == FINAL_TEXT and out["tokens"]["input"] == 48

    script(stub, "gpt-4o", [{"text": "", "tool_calls": CALLS[0]}, {"text": "I would rather not book.\x1b[2J\u202e"}])
    assert main(_cli(db)) == 5
    captured = capsys.readouterr()
    assert "step 2 diverged (answered_instead_of_calling)" in captured.out
    assert "book.\\x1b[2J\\u202e" in captured.out and "\x1b" not in captured.out  # a trace value is escaped
    assert f"diverged at {STEP_MSG_IDS[1]}" in captured.err

    script(stub, "gpt-4o", [{"status": 500}])
    assert main(_cli(db)) == 3
    assert main([*_cli(db), "--max-steps", "0"]) == 2  # out of the flag's range: a usage error
    assert main([*_cli(db), "--turn", "no-such-message"]) == 1
    assert main([*_cli(db), "--turn", STEP_MSG_IDS[0]]) == 1  # an assistant record does not start a turn
    assert "no-such-message" in capsys.readouterr().err
    damaged = ["replay", "--db", db, "--conversation", STEPS_DAMAGED, "--provider", "openai", "--model", "gpt-4o",
               "--steps", "--json"]  # fmt: skip
    assert main(damaged) == 1
    assert json.loads(capsys.readouterr().out)["status"] == "refused"

    assert main(["runs", "--db", db, "--json"]) == 0
    listed = [r for r in json.loads(capsys.readouterr().out) if r.get("kind") == "steps"]
    assert sorted(r["status"] for r in listed) == ["diverged", "failed", "matched", "refused"]
    assert all({"turn", "diverged_at", "steps", "tokens", "cost_usd"} <= set(r) for r in listed)


@pytest.mark.usefixtures("cli_env")
def test_steps_judge_final_answers_by_the_chosen_comparison_and_count_the_judges_cost(
    steps_db: str, stub: StubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    reworded = FINAL_TEXT.replace("Booked", "I booked").replace("will be", "is")
    tools = [{"text": "", "tool_calls": calls} for calls in CALLS]
    script(stub, "gpt-4o", [*tools, {"text": reworded}])
    assert main(_cli(steps_db, "--json", "--compare", "exact")) == 5
    out = json.loads(capsys.readouterr().out)
    last = out["steps"][-1]
    assert (out["comparison"], out["status"], last["reason"]) == ("exact", "diverged", "different_answer")
    assert last["detail"]["score"] == 0.0 and any(op["op"] == "replace" for op in last["detail"]["word_diff"])

    script(stub, "gpt-4o", [*tools, {"text": reworded}])
    script(stub, "gpt-4o-mini", [{"verdict": "same", "reasoning": "Same booking, hotel and weather."}])
    assert main(_cli(steps_db, "--json", "--compare", "judge:openai/gpt-4o-mini")) == 0
    out = json.loads(capsys.readouterr().out)
    judge = out["steps"][-1]["detail"]["judge"]
    assert (out["status"], judge["verdict"]) == ("matched", "same")
    assert judge["reasoning"] == "Same booking, hotel and weather."
    steps_cost = sum(s["cost_usd"] for s in out["steps"])
    assert judge["cost_usd"] > 0 and out["cost_usd"] == pytest.approx(steps_cost + judge["cost_usd"])

    script(stub, "gpt-4o", [*tools, {"text": reworded}])
    script(stub, "gpt-4o-mini", [{"text": "They look the same to me."}])  # not the documented format
    assert main(_cli(steps_db, "--json", "--compare", "judge:openai/gpt-4o-mini")) == 3
    out = json.loads(capsys.readouterr().out)
    assert (out["status"], out["reason"]) == ("failed", "judge_failed")
    assert "not a verdict" in out["error"]


@pytest.mark.usefixtures("cli_env")
def test_the_text_output_shows_the_argument_diff_of_a_different_arguments_step(
    steps_db: str, stub: StubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    changed = {"flight": "TP125", "seats": 2, "extras": {"insurance": True}, "note": "aisle\x1b[2J"}
    script(stub, "gpt-4o", [{"text": "", "tool_calls": CALLS[0]}, {"text": "", "tool_calls": [{"name": "book",
           "arguments": changed}]}])  # fmt: skip
    assert main(_cli(steps_db)) == 5
    out = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(out) if line.startswith("step 2 diverged (different_arguments)"))
    assert out[at + 1 :] == [  # the run ends at its divergence: these are the last lines
        "    book /extras/bags: 1 -> (removed)",
        "    book /extras/insurance: false -> true",
        '    book /flight: "TP123" -> "TP125"',
        '    book /note: (absent) -> "aisle\\u001b[2J"',
    ]
