"""``traceloupe runs``: recorded replays, newest first, as a table or as JSON."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING

from web.cli import flags
from web.cli.db import add_db_argument, run_with_store

if TYPE_CHECKING:
    from core.store import RunView, Store

ERROR_CHARS = 100


def register(parser: argparse.ArgumentParser) -> None:
    """``--db``, ``--conversation``, ``--json``, ``--limit``."""
    add_db_argument(parser)
    parser.add_argument("--conversation", metavar="ID", default=None, help="only the runs of this conversation")
    parser.add_argument("--json", action="store_true", help="print a JSON array (for scripts)")
    parser.add_argument("--limit", type=flags.LIMIT, default=100, help="at most this many (default: %(default)s)")


def run(ns: argparse.Namespace) -> int:
    """Print the runs."""
    from core.jsonio import dumps
    from web.cli.terminal import cell

    def body(store: Store) -> int:
        if ns.conversation is not None:
            store.get_conversation(ns.conversation)  # an unknown id is an error, not an empty list
        found: list[RunView] = []
        cursor: str | None = None
        while len(found) < ns.limit:
            page, cursor = store.list_runs(ns.conversation, limit=min(500, ns.limit - len(found)), cursor=cursor)
            found.extend(page)
            if cursor is None:
                break
        step_runs = store.list_step_runs(ns.conversation, limit=min(500, max(1, ns.limit)))
        if ns.json:
            # Replies and step runs in one list, newest first; a step run says so with "kind": "steps".
            items = [(r.started_at, {**_fields(r), **_cost(r)}) for r in found]
            items += [(s.started_at, s.to_json()) for s in step_runs]
            items.sort(key=lambda item: -item[0])
            listed = [item for _, item in items[: ns.limit]]
            sys.stdout.buffer.write(dumps(listed, indent=True))  # a stored answer may nest past orjson's 254 levels
            sys.stdout.buffer.write(b"\n")
            return 0
        print(
            f"{'run':<32} {'conversation':<24} {'provider':<16} {'model':<20} {'status':<16} {'ms':>7} {'tokens':>7}"
            "  error"
        )
        for r in found:
            latency = "" if r.latency_ms is None else str(r.latency_ms)
            tokens = "" if r.usage.total_tokens is None else str(r.usage.total_tokens)
            # A failed run says why on its own line of the table: one line, cut to a readable length.
            error = cell(" ".join((r.error or "").split()), ERROR_CHARS)
            print(
                f"{cell(r.run_id, 32)} {cell(r.conversation_id, 24)} {cell(r.provider, 16)} {cell(r.model, 20)} "
                f"{cell(r.status, 16)} {latency:>7} {tokens:>7}  {error}".rstrip()
            )
        for s in step_runs:
            tokens = "" if s.input_tokens is None else str((s.input_tokens or 0) + (s.output_tokens or 0))
            latency = "" if s.latency_ms is None else str(s.latency_ms)
            why = " ".join(f"steps: {len(s.steps)}/{s.recorded_steps} {s.reason or ''}".split())
            print(
                f"{cell(s.run_id, 32)} {cell(s.conversation_id, 24)} {cell(s.provider, 16)} {cell(s.model, 20)} "
                f"{cell('steps:' + s.status, 16)} {latency:>7} {tokens:>7}  {cell(why, ERROR_CHARS)}".rstrip()
            )
        return 0

    return run_with_store(ns, body)


def _fields(run: RunView) -> dict[str, object]:
    """A run's fields as JSON values; its bodies as stored, not copied level by level (``dataclasses.asdict``
    recurses once a level, and a provider's answer may nest deeper than Python's recursion limit allows)."""
    out: dict[str, object] = {}
    for field in dataclasses.fields(run):
        value = getattr(run, field.name)
        is_row = dataclasses.is_dataclass(value) and not isinstance(value, type)
        out[field.name] = dataclasses.asdict(value) if is_row else value
    return out


def _cost(run: RunView) -> dict[str, object]:
    """A reply run's cost from genai-prices' table, read from its stored answer (null with a note when unknown)."""
    from core.replay.cost import run_cost

    _, price = run_cost(run.provider, run.model, run.response_body)
    return {"cost_usd": price.usd, "cost_note": price.note}
