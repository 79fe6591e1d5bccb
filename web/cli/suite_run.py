"""``traceloupe suite run``: replay every conversation of a suite on the job queue and report what regressed.

The jobs go through the queue of the store's backend (``core.jobs``): on SQLite this process runs
them with ``--concurrency`` worker threads, and a ``serve`` on the same database helps; on
PostgreSQL this process runs an embedded worker of that concurrency and ``traceloupe worker``
processes anywhere share the jobs. However many help, the run's ``--concurrency`` bounds its
replays in flight (its jobs are queued in that many lanes). Interrupted (Ctrl-C, a killed process), the run keeps its
stored jobs and pending conversations: ``traceloupe suite run NAME --resume`` queues what is left
(nothing twice) and finishes it, as does any process running that database's queue (``serve``).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from web.cli import flags
from web.cli.db import add_db_argument, run_with_store
from web.cli.terminal import echo, printable

if TYPE_CHECKING:
    from core.store import Store
    from core.suites import Report

DEFAULT_CONCURRENCY = 4
MAX_CONCURRENCY = 64
"""As the dashboard's Run form (``web.suites.service``): lanes of the queue, not threads of this process only."""
JUNIT_NOT_WRITTEN = 7
"""Exit code when nothing regressed but the --junit file could not be written (a regression's 6 wins)."""
JUNIT_RULE = (
    "JUnit XML (--junit FILE): one test case per conversation. With a baseline, a test case fails only for a "
    "regression (matched in the baseline, diverged or failed now), so a run with 3 regressions has 3 failures; "
    "without a baseline every diverged or failed conversation fails, and the file says there was no baseline "
    "(a <properties> entry). Refused and cancelled ones are skipped."
)


def register(actions: Any) -> None:
    """The ``run`` action's options."""
    parser = actions.add_parser(
        "run",
        help="replay every conversation of a suite on the job queue and report regressions",
        description=(
            "Exit 0: no regression; 6: at least one regression against the baseline; 1: nothing could run; "
            f"{JUNIT_NOT_WRITTEN}: no regression but the --junit file could not be written. " + JUNIT_RULE
        ),
    )
    parser.add_argument("name", metavar="NAME")
    parser.add_argument("--provider", metavar="P", help="dialect: openai, openai-responses, anthropic, gemini, ...")
    parser.add_argument("--model", type=flags.MODEL, metavar="M", help="the model to ask")
    parser.add_argument(
        "--mode", choices=("final", "steps"), default="final",
        help="final: regenerate the final reply (as Re-run); steps: the agent replay of the last turn (default: final)",
    )  # fmt: skip
    parser.add_argument(
        "--concurrency", type=flags.CONCURRENCY, metavar="N",
        help=f"conversations replayed at once, across every process running the database's jobs "
        f"(default: {DEFAULT_CONCURRENCY}; --resume: the run's own)",
    )  # fmt: skip
    parser.add_argument(
        "--max-cost", type=flags.MAX_COST, metavar="USD",
        help="do not send a call (a reply, a step) whose estimated cost would take the run past USD",
    )  # fmt: skip
    parser.add_argument(
        "--compare", metavar="HOW",
        help="how a final answer is judged the same as the recorded one: exact, similar[:THRESHOLD] "
        "(default similar:0.6), json, or judge:PROVIDER/MODEL (the judge's cost counts in the run)",
    )  # fmt: skip
    parser.add_argument(
        "--baseline", metavar="RUN_ID|last",
        help="compare with this suite run (last: the newest finished one of the same mode and comparison)",
    )  # fmt: skip
    parser.add_argument(
        "--cross-baseline", action="store_true",
        help="accept a --baseline RUN_ID of another mode or comparison (the report labels it)",
    )  # fmt: skip
    parser.add_argument(
        "--junit", metavar="FILE",
        help="write the report as JUnit XML (see the rule above); written whole or not at all, never through a "
        f"symlink or into anything but a regular file; exit {JUNIT_NOT_WRITTEN} when it cannot be (unless 6)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the report as JSON (progress goes to stderr)")
    parser.add_argument(
        "--resume", action="store_true",
        help="finish the suite's newest unfinished run (its provider, model and options) instead of starting one",
    )  # fmt: skip
    parser.add_argument(
        "--timeout", type=flags.SECONDS, default=120.0, metavar="S", help="seconds per provider request"
    )
    add_db_argument(parser)


def run(ns: argparse.Namespace) -> int:
    """Start (or resume) the run, show its progress, print the report; the exit code the report gives."""
    if ns.resume and (ns.provider or ns.model or ns.baseline or ns.compare):
        echo("traceloupe suite run: --resume takes the run's own provider, model, comparison and baseline",
             file=sys.stderr)  # fmt: skip
        return 2
    if not ns.resume and not (ns.provider and ns.model):
        echo("traceloupe suite run: --provider and --model are needed (or --resume)", file=sys.stderr)
        return 2
    if (ns.concurrency is not None and not 1 <= ns.concurrency <= MAX_CONCURRENCY) or ns.timeout <= 0:
        echo(f"traceloupe suite run: --concurrency must be between 1 and {MAX_CONCURRENCY} and --timeout positive",
             file=sys.stderr)  # fmt: skip
        return 2
    return run_with_store(ns, lambda store: _run(store, ns))


def _run(store: Store, ns: argparse.Namespace) -> int:
    from core.errors import MisuseError
    from core.jobs import JobSettings, queue_for
    from core.suites import Suites
    from core.suites.runner import enqueue_open, watch
    from web.cli.suite_output import ProgressPrinter

    suites = Suites(store)
    if ns.resume:
        run_id = suites.unfinished(ns.name)
        if run_id is None:
            raise MisuseError(f"suite {ns.name!r} has no unfinished run to resume")
        run = suites.run(run_id)
    else:
        from core.replay.answers import DEFAULT_COMPARISON, parse_comparison
        from core.replay.judge import check_judge

        comparison = DEFAULT_COMPARISON if ns.compare is None else parse_comparison(ns.compare)
        _check_provider(ns.provider)
        if comparison.kind == "judge":
            check_judge(comparison)
        concurrency = ns.concurrency or DEFAULT_CONCURRENCY
        run = suites.new_run(
            ns.name, provider=ns.provider, model=ns.model, mode=ns.mode, concurrency=concurrency,
            max_cost=ns.max_cost, baseline=ns.baseline, comparison=comparison, cross_baseline=ns.cross_baseline,
        )  # fmt: skip
    stream = sys.stderr if ns.json else sys.stdout
    echo(f"suite {ns.name} run {run.run_id}: {len(run.items)} conversation(s), {run.provider} {run.model}, "
         f"mode {run.mode}, compared by {run.comparison_text}", file=stream)  # fmt: skip
    queue = queue_for(store, JobSettings(concurrency=ns.concurrency or run.concurrency, send_timeout=ns.timeout))
    printer = ProgressPrinter(stream, terminal=stream.isatty())
    queue.start()
    try:
        enqueue_open(queue, suites, run)
        watch(suites, queue, run.run_id, on_item=printer.item, on_progress=printer.update)
    except KeyboardInterrupt:
        printer.close()
        queue.stop(wait=False)
        echo(f"traceloupe suite run: interrupted; `traceloupe suite run {ns.name} --resume` finishes run "
             f"{run.run_id}", file=sys.stderr)  # fmt: skip
        return 130
    printer.close()
    queue.stop()
    report = suites.report(run.run_id)
    return _print_report(report, ns, stream)


def _check_provider(provider: str) -> None:
    """Refuse before anything is recorded when the provider is unknown or its key is not set here."""
    from core.errors import MisuseError
    from core.providers import provider_named
    from core.replay.endpoints import endpoint_for, unavailable_reason

    known = provider_named(provider)  # UnknownNameError listing the known providers
    if endpoint_for(known, os.environ) is None:
        raise MisuseError(f"{provider} is unavailable: {unavailable_reason(known, os.environ)}")


def _print_report(report: Report, ns: argparse.Namespace, stream: Any) -> int:
    """Print the report (and write its JUnit file); the exit code: the report's, or JUNIT_NOT_WRITTEN when the
    file could not be written and nothing regressed."""
    import xml.etree.ElementTree as ET

    import orjson

    from core.suites.junit import junit_tree
    from web.cli.output_file import OutputFileError, write_file
    from web.cli.suite_output import report_lines

    junit_error: str | None = None
    if ns.junit:
        tree = junit_tree(report)
        try:
            write_file(ns.junit, ET.tostring(tree.getroot(), encoding="utf-8", xml_declaration=True))
        except OutputFileError as exc:
            junit_error = str(exc)
    if ns.json:
        sys.stdout.buffer.write(orjson.dumps(report.to_json(), option=orjson.OPT_INDENT_2) + b"\n")
    else:
        for line in report_lines(report, every_item=False):
            print(printable(line), file=stream)
    code = report.exit_code()
    if junit_error is not None:
        echo(f"traceloupe suite run: {junit_error}", file=sys.stderr)
        return code or JUNIT_NOT_WRITTEN
    if ns.junit:
        echo(f"JUnit XML written to {ns.junit}", file=sys.stderr)
    return code
