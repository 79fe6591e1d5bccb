"""``traceloupe replay --steps``: replay one turn step by step on its recorded tool outputs.

Exit codes: 0 every step made the recorded calls up to the same final answer; 5 the run
diverged (the line names the recorded step and the reason); 3 a provider failure (the steps
before it stay recorded); 4 stopped by ``--max-steps`` or ``--max-cost`` after at least one
step; 1 nothing could be attempted (unknown name, no key, a damaged record in the turn, step 1's
body failing preflight, the first step already over ``--max-cost``); 2 the database cannot be used.
A later step whose body fails preflight ends the run ``refused`` with exit 3; ``--force`` sends it.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from web.cli import flags
from web.cli.db import run_with_store
from web.cli.terminal import cell, echo

if TYPE_CHECKING:
    from core.replay.sent_tools import GivenTools
    from core.store import Store
    from core.store.step_runs import StepRunView, StepView

EXIT_OK = 0
EXIT_NOTHING = 1
EXIT_FAILED = 3
EXIT_CAPPED = 4
EXIT_DIVERGED = 5
SAID_CHARS = 200


def register(parser: argparse.ArgumentParser) -> None:
    """``--steps``, ``--turn``, ``--max-steps``, ``--max-cost``, ``--json`` (on ``traceloupe replay``)."""
    parser.add_argument(
        "--steps", action="store_true", help="replay one turn step by step on its recorded tool outputs"
    )
    parser.add_argument(
        "--turn", type=flags.ID, metavar="USER_MSG_ID", help="the turn (default: the last user message with a trace)"
    )
    parser.add_argument(
        "--max-steps", type=flags.MAX_STEPS, metavar="N", help="stop after N steps (default: recorded steps + 2)"
    )
    parser.add_argument(
        "--max-cost", type=flags.MAX_COST, metavar="USD",
        help="do not send a step whose estimated cost (input, and output up to the request's limit) would pass USD",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the step run as JSON (with --steps)")
    parser.add_argument(
        "--compare", metavar="HOW", default=None,
        help="how two final answers are judged the same (with --steps): exact, similar[:THRESHOLD] "
        "(default similar:0.6), json, or judge:PROVIDER/MODEL",
    )  # fmt: skip


def exit_code(run: StepRunView) -> int:
    """The process exit code for a finished step run (see the module docstring)."""
    if run.status == "matched":
        return EXIT_OK
    if run.status == "diverged":
        return EXIT_DIVERGED
    if run.status == "failed":
        return EXIT_FAILED
    if run.status == "capped" and run.steps:
        return EXIT_CAPPED
    if run.status == "refused" and run.steps:
        return EXIT_FAILED  # a later step's body failed preflight: steps were sent
    return EXIT_NOTHING


def run(ns: argparse.Namespace) -> int:
    """Replay the turn; print each step (or the JSON) on stdout and the outcome on stderr."""
    import orjson

    from core.replay.answers import DEFAULT_COMPARISON, parse_comparison
    from core.replay.steps import replay_steps

    def body(store: Store) -> int:
        comparison = DEFAULT_COMPARISON if ns.compare is None else parse_comparison(ns.compare)
        result = replay_steps(
            store,
            ns.conversation,
            ns.provider,
            ns.model,
            turn=ns.turn,
            max_steps=ns.max_steps,
            max_cost=ns.max_cost,
            timeout=ns.timeout,
            force=ns.force,
            comparison=comparison,
            tools=given_tools(ns),
        )
        if ns.json:
            sys.stdout.buffer.write(orjson.dumps(result.to_json(), option=orjson.OPT_INDENT_2) + b"\n")
        else:
            _print_steps(result)
        echo(_summary(result), file=sys.stderr)
        return exit_code(result)

    return run_with_store(ns, body)


def given_tools(ns: argparse.Namespace) -> GivenTools | None:
    """``--tools``, ``--tool-choice`` and the parameter flags as a replay takes them (None when none is given)."""
    from core.providers import GenerationParams
    from core.replay.sent_tools import GivenTools

    params = flags.generation_params(ns)
    if ns.tools is None and ns.tool_choice is None and params == GenerationParams():
        return None
    return GivenTools(ns.tools, ns.tool_choice, params)


def _print_steps(run: StepRunView) -> None:
    for step in run.steps:
        calls = ", ".join(f"{c['name']}({orjson_text(c['arguments'])})" for c in step.tool_calls())
        said = calls or orjson_text(step.text() or "")
        cost = "cost unknown" if step.cost_usd is None else f"${step.cost_usd:.6f}"
        tokens = f"{step.input_tokens or 0}+{step.output_tokens or 0} tokens"
        reason = f" ({step.reason})" if step.reason else ""
        said = cell(said, SAID_CHARS).rstrip()
        echo(
            f"step {step.index} {step.verdict}{reason} vs {step.recorded_msg_id or '-'}: {said}"
            f"  [{tokens}, {cost}, {step.latency_ms} ms]"
        )
        if step.detail and "comparison" in step.detail:
            echo(f"  {answer_line(step.detail)}")
        for line in _argument_diff(step):
            echo(f"    {line}")


def answer_line(detail: dict[str, object]) -> str:
    """How the final answers were judged, on one line: the comparison, the score or the judge's verdict, the diff."""
    from core.suites.junit import answer_text

    return answer_text(detail)


def _argument_diff(step: StepView) -> list[str]:
    """A ``different_arguments`` step's JSON diff, one line per pointer: ``name /path: recorded -> replayed``."""
    if step.reason != "different_arguments":
        return []
    lines = []
    for call in (step.detail or {}).get("arguments_diff") or ():
        for change in call.get("diff") or ():
            recorded = "(absent)" if change.get("op") == "added" else _json(change.get("recorded"))
            replayed = "(removed)" if change.get("op") == "removed" else _json(change.get("replayed"))
            where = f"{call.get('name', '')} {change.get('path') or '/'}"
            lines.append(cell(f"{where}: {recorded} -> {replayed}", 2 * SAID_CHARS).rstrip())
    return lines


def _json(value: object) -> str:
    import orjson

    return orjson.dumps(value).decode()


def _summary(run: StepRunView) -> str:
    from core.replay.sent_tools import INFERRED_WARNING, params_said, tools_said

    cost = "unknown" if run.cost_usd is None else f"${run.cost_usd:.6f}"
    where = f" at {run.diverged_at}" if run.diverged_at else ""
    why = f" ({run.reason})" if run.reason else ""
    error = f": {' '.join(run.error.split())}" if run.error else ""
    cap = "" if run.max_cost is None else f" of --max-cost ${run.max_cost}"
    inferred = f" ({INFERRED_WARNING})" if run.tools_source == "inferred" else ""
    given = params_said(run.params)
    params = f"; {given}" if given else ""
    return (
        f"step run {run.run_id} {run.status}{where}{why}{inferred}{error}; compared by {run.comparison or '-'}; "
        f"{tools_said(run.tools_source, run.tool_names, run.tool_choice)}{params}; {len(run.steps)} step(s), "
        f"{run.input_tokens or 0}+{run.output_tokens or 0} tokens, cost {cost}{cap}"
    )


def orjson_text(value: object) -> str:
    """A JSON value as compact text (a string as it is)."""
    import orjson

    return value if isinstance(value, str) else orjson.dumps(value).decode()
