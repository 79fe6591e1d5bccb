"""``traceloupe replay``: re-run a stored conversation against a provider and record the run.

The key and the base URL come from the environment only (``OPENAI_API_KEY`` /
``OPENAI_BASE_URL`` and the like; see the README). By default the final assistant
reply is regenerated from everything before it; ``--upto MSG_ID`` regenerates that
message instead.

Exit codes: 0 the provider answered and the reply was recorded; 3 the run was
recorded but failed (HTTP error, rate limit, timeout, malformed answer, a damaged
record in the history, a body that fails preflight: ``--force`` sends it anyway), with
one line naming why; 1 nothing was attempted (unknown
conversation, provider or message, no key: the line names the variable); 2 the
database cannot be used. ``--steps`` replays one turn step by step instead (``web.cli.replay_steps``).

The requests carry the tools, tool choice and parameters stored for the turn (a ``traceloupe_request``
line, ``core/FORMAT.md``); ``--tools FILE`` and ``--tool-choice`` override them, and ``--max-tokens``,
``--temperature``, ``--top-p``, ``--stop`` and ``--thinking`` the parameters (every step of a step replay);
a value out of range is argparse's one line and exit 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from web.cli import flags, replay_steps
from web.cli.db import add_db_argument, run_with_store

if TYPE_CHECKING:
    from core.store import Store

EXIT_FAILED_RUN = 3


def register(parser: argparse.ArgumentParser) -> None:
    """``--conversation``, ``--provider``, ``--model``, ``--upto``, ``--timeout``, ``--db``."""
    parser.add_argument("--conversation", required=True, metavar="ID", help="the stored conversation to replay")
    parser.add_argument(
        "--provider",
        required=True,
        metavar="P",
        help="provider: openai, openai-responses, anthropic, gemini, zhipu, doubao",
    )
    parser.add_argument("--model", required=True, type=flags.MODEL, metavar="M", help="the model to ask")
    parser.add_argument(
        "--upto", type=flags.ID, metavar="MSG_ID", help="regenerate this message (default: the final assistant reply)"
    )
    parser.add_argument(
        "--timeout", type=flags.SECONDS, default=120.0, metavar="S", help="seconds to wait (default: 120)"
    )
    parser.add_argument(
        "--force", action="store_true", help="send a body that fails preflight anyway (to reproduce the 400)"
    )
    flags.add_tool_arguments(parser)
    flags.add_generation_arguments(parser)
    add_db_argument(parser)
    replay_steps.register(parser)


def run(ns: argparse.Namespace) -> int:
    """Replay and print the reply (stdout) and the run's figures (stderr)."""
    from core.replay.cost import run_cost
    from core.replay.run import replay, reply_message
    from web.cli.terminal import echo

    if ns.timeout <= 0:
        print("traceloupe: --timeout must be positive", file=sys.stderr)
        return 1
    if ns.effort is not None:
        from core.errors import MisuseError
        from web.cli.payload import check_effort

        try:
            check_effort(ns.provider, ns.model, ns.effort)
        except MisuseError as exc:
            echo(f"traceloupe: {exc}", file=sys.stderr)
            return 2
    if ns.steps:
        return replay_steps.run(ns)

    def body(store: Store) -> int:
        run = replay(store, ns.conversation, ns.provider, ns.model, upto=ns.upto, timeout=ns.timeout, force=ns.force,
                     tools=replay_steps.given_tools(ns))  # fmt: skip
        if run.status != "ok":
            reason = " ".join((run.error or "no detail").split())
            echo(f"traceloupe: run {run.run_id} failed ({run.status}): {reason}", file=sys.stderr)
            return EXIT_FAILED_RUN
        message = reply_message(run)
        tokens = "" if run.usage.total_tokens is None else f", {run.usage.total_tokens} tokens"
        price = run_cost(run.provider, run.model, run.response_body)[1]
        cost = f"cost unknown ({price.note})" if price.usd is None else f"cost ${price.usd:.6f}"
        echo(f"run {run.run_id} ok ({run.provider} {run.model}, {run.latency_ms} ms{tokens}) {cost}", file=sys.stderr)
        if message is not None:
            if message.content:
                echo(message.content, multiline=True)
            for call in message.tool_calls or ():
                echo(f"tool call {call.name}({call.arguments})")
        return 0

    return run_with_store(ns, body)
