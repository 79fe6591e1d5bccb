"""What ``traceloupe suite`` prints: the live progress (a bar on a terminal, a line per conversation otherwise)
and the report as text. Every value from the store goes through ``web.cli.terminal`` (ids are untrusted)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, TextIO

from web.cli.terminal import cell, printable

if TYPE_CHECKING:
    from core.suites import ItemView, Progress, Report

BAR_CELLS = 24
ERASE_LINE = "\r\x1b[K"
"""Back to the line's start and clear it: the bar is rewritten in place."""


def _cost(usd: float | None) -> str:
    return "cost unknown" if usd is None else f"${usd:.6f}"


def _clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def item_line(item: ItemView) -> str:
    """One conversation's outcome on one line (made printable)."""
    from core.suites.junit import describe

    wall = "" if item.wall_ms is None else f", {item.wall_ms} ms"
    tokens = f"{item.input_tokens or 0}+{item.output_tokens or 0} tokens"
    return printable(f"{item.conversation_id} {describe(item)} [{tokens}, {_cost(item.cost_usd)}{wall}]")


class ProgressPrinter:
    """Shows a suite run as it goes: a bar rewritten in place on a terminal, else one line per finished item."""

    def __init__(self, stream: TextIO, *, terminal: bool) -> None:
        self.stream = stream
        self.terminal = terminal
        self.started = time.monotonic()
        self.done_at_start: int | None = None
        self.shown = 0

    def item(self, item: ItemView, progress: Progress) -> None:
        """An item got its outcome."""
        self.shown += 1
        if not self.terminal:
            print(f"[{progress.done}/{progress.total}] {item_line(item)}", file=self.stream, flush=True)

    def update(self, progress: Progress) -> None:
        """The counts changed (or time passed): redraw the bar."""
        if not self.terminal:
            return
        if self.done_at_start is None:
            self.done_at_start = progress.done  # a resumed run: its ETA counts only what this process did
        total = max(progress.total, 1)
        filled = BAR_CELLS * progress.done // total
        bar = "#" * filled + "." * (BAR_CELLS - filled)
        failed = progress.counts.get("failed", 0)
        diverged = progress.counts.get("diverged", 0)
        did = progress.done - self.done_at_start
        elapsed = time.monotonic() - self.started
        eta = _clock(elapsed / did * progress.remaining) if did else "?"
        line = (
            f"[{bar}] {progress.done}/{progress.total} done, {diverged} diverged, {failed} failed, "
            f"{progress.remaining} remaining, {_cost(progress.cost_usd)} so far, ETA {eta}"
        )
        self.stream.write(ERASE_LINE + line)
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.terminal:
            self.stream.write("\n")
            self.stream.flush()


def report_lines(report: Report, *, every_item: bool) -> list[str]:
    """The report as text: the run, the conversations (all, or those not matched), the totals, regressions and fixes."""
    run = report.run
    counts = report.counts()
    lines = [
        printable(
            f"suite {run.suite} run {run.run_id}: {run.provider} {run.model}, mode {run.mode}, "
            f"compared by {run.comparison_text}, concurrency {run.concurrency}, {run.status}"
        )
    ]
    shown = [i for i in run.items if every_item or i.outcome != "matched"]
    lines += [f"  {item_line(i)}" for i in shown]
    tokens = report.tokens()
    unknown = f" ({report.cost_unknown} of unknown cost)" if report.cost_unknown else ""
    lines.append(
        f"totals: {len(run.items)} conversations: "
        + ", ".join(f"{counts[o]} {o}" for o in ("matched", "diverged", "failed", "refused", "cancelled"))
        + (f", {counts['pending'] + counts['running']} unfinished" if counts["pending"] + counts["running"] else "")
        + f"; tokens {tokens['input']}+{tokens['output']}; cost ${report.cost_usd:.6f}{unknown}; "
        f"wall {report.wall_ms / 1000:.1f} s"
    )
    if run.max_cost is not None:
        lines.append(f"spent ${report.cost_usd:.6f} of --max-cost ${run.max_cost}")
    if report.stopped_by_cost:
        lines.append(
            f"--max-cost {run.max_cost}: {report.stopped_by_cost} step replay(s) stopped before a step "
            "that could pass the cap"
        )
    if report.cancelled_by_cost:
        lines.append(
            f"--max-cost {run.max_cost}: the spend reached the cap, "
            f"{report.cancelled_by_cost} conversation(s) were cancelled before they started"
        )
    if report.baseline is not None:
        lines.append(
            printable(
                f"against baseline {report.baseline.run_id} ({report.baseline.provider} {report.baseline.model}): "
                f"{len(report.regressions)} regression(s), {len(report.fixes)} fix(es)"
            )
        )
        if report.across:
            lines.append(printable(f"  {report.across}"))
        lines += [f"  regression {item_line(c.item)} (was {c.before})" for c in report.regressions]
        lines += [f"  fix {item_line(c.item)} (was {c.before})" for c in report.fixes]
    return lines


def suite_row(name: str, members: int, runs: int, last: str | None, filter_text: str) -> str:
    """One row of ``suite list``."""
    return f"{cell(name, 30)} {members:>7} {runs:>5}  {cell(last or '-', 32)}  {printable(filter_text)}"
