"""``traceloupe suite``: named sets of conversations, replayed in bulk on the job queue, with a regression report.

::

    suite create NAME (--search T | --kind K | --damaged | --conversation ID ...)
    suite list [--json]
    suite show NAME [--run RUN_ID] [--json]
    suite run NAME --provider P --model M [--mode final|steps] [--concurrency N] [--max-cost USD]
              [--baseline RUN_ID|last] [--junit FILE] [--json]
    suite run NAME --resume [--junit FILE] [--json]

Exit codes of ``suite run``: 0 no regression; 6 at least one regression against the baseline;
1 nothing could run (every conversation refused or cancelled, an unknown name, no key); 2 the
database cannot be used; 130 interrupted (``suite run NAME --resume`` finishes the run).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from web.cli import suite_run
from web.cli.db import add_db_argument, run_with_store
from web.cli.terminal import echo, printable, timestamp

if TYPE_CHECKING:
    from core.store import Store
    from core.suites import SuiteRunView


def register(parser: argparse.ArgumentParser) -> None:
    """The ``create``, ``list``, ``show`` and ``run`` actions."""
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="save the conversations a filter matches now as a suite")
    create.add_argument("name", metavar="NAME")
    create.add_argument("--search", metavar="TEXT", help="conversations containing this text (the list's search)")
    create.add_argument("--kind", metavar="KIND", help="conversations holding this kind (user:image, tool...)")
    create.add_argument("--damaged", action="store_true", default=None, help="conversations with damaged records")
    create.add_argument(
        "--conversation", action="append", metavar="ID", help="this conversation (repeat for more; not with filters)"
    )
    add_db_argument(create)
    listing = actions.add_parser("list", help="the suites, with their sizes and newest runs")
    listing.add_argument("--json", action="store_true", help="print JSON")
    add_db_argument(listing)
    show = actions.add_parser("show", help="a suite's conversations, its runs and the report of one run")
    show.add_argument("name", metavar="NAME")
    show.add_argument("--run", metavar="RUN_ID", help="the run whose report to show (default: the newest)")
    show.add_argument("--json", action="store_true", help="print JSON")
    add_db_argument(show)
    suite_run.register(actions)


def run(ns: argparse.Namespace) -> int:
    """Dispatch to the action."""
    if ns.action == "run":
        return suite_run.run(ns)
    action = {"create": _create, "list": _list, "show": _show}[ns.action]
    if ns.action == "create" and (code := _check_create(ns)) is not None:
        return code
    return run_with_store(ns, lambda store: action(store, ns))


def _check_create(ns: argparse.Namespace) -> int | None:
    from web.list_query import KIND_FILTERS

    filtered = ns.search is not None or ns.kind is not None or ns.damaged
    if bool(filtered) == bool(ns.conversation):
        echo("traceloupe suite create: a filter (--search, --kind, --damaged) or --conversation IDs", file=sys.stderr)
        return 2
    if ns.kind is not None and ns.kind not in KIND_FILTERS:
        echo(f"traceloupe suite create: unknown kind {ns.kind!r}; expected one of: {', '.join(KIND_FILTERS)}",
             file=sys.stderr)  # fmt: skip
        return 2
    return None


def _create(store: Store, ns: argparse.Namespace) -> int:
    from core.store.filters import ConversationFilter, describe
    from core.suites import Suites

    suites = Suites(store)
    if ns.conversation:
        suite = suites.create(ns.name, conversations=ns.conversation)
    else:
        chosen = ConversationFilter(ns.search or "", ns.kind or "", damaged=bool(ns.damaged))
        suite = suites.create(ns.name, query=chosen.query())
    echo(f"suite {suite.name}: {len(suite.conversations)} conversation(s), filter {describe(suite.filter)}")
    return 0


def _list(store: Store, ns: argparse.Namespace) -> int:
    import dataclasses

    import orjson

    from core.store.filters import describe
    from core.suites import Suites
    from web.cli.suite_output import suite_row

    found = Suites(store).summaries()
    if ns.json:
        sys.stdout.buffer.write(orjson.dumps([dataclasses.asdict(s) for s in found], option=orjson.OPT_INDENT_2))
        sys.stdout.buffer.write(b"\n")
        return 0
    print(f"{'suite':<30} {'members':>7} {'runs':>5}  {'newest run':<32}  filter")
    for s in found:
        print(suite_row(s.name, s.members, s.runs, s.last_run_id, describe(s.filter)))
    return 0


def _run_json(run: SuiteRunView) -> dict[str, object]:
    return {
        "run_id": run.run_id,
        "provider": run.provider,
        "model": run.model,
        "mode": run.mode,
        "comparison": run.comparison,
        "status": run.status,
        "baseline": run.baseline_run_id,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
    }


def _show(store: Store, ns: argparse.Namespace) -> int:
    import orjson

    from core.store.filters import describe
    from core.suites import Suites
    from core.suites.api import resolve_run
    from web.cli.suite_output import report_lines

    suites = Suites(store)
    suite = suites.get(ns.name)
    runs = suites.runs(ns.name)
    report = suites.report(resolve_run(suites, ns.name, ns.run).run_id) if runs or ns.run else None
    if ns.json:
        data = {
            "name": suite.name,
            "filter": suite.filter,
            "created_at": suite.created_at,
            "conversations": list(suite.conversations),
            "runs": [_run_json(r) for r in runs],
            "report": None if report is None else report.to_json(),
        }
        sys.stdout.buffer.write(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
        return 0
    echo(f"suite {suite.name}: {len(suite.conversations)} conversation(s), filter {describe(suite.filter)}")
    for r in runs:
        how = r.comparison or "-"
        echo(f"  run {r.run_id} {timestamp(r.created_at)} {r.provider} {r.model} {r.mode} {how} {r.status}")
    if report is not None:
        for line in report_lines(report, every_item=True):
            print(printable(line))
    return 0
