"""A suite run's report: each conversation's outcome, the totals, and what changed against a baseline run.

A **regression** is a conversation ``matched`` in the baseline and ``diverged`` or ``failed`` now;
a **fix** the other way round. Conversations absent from either run are compared with nothing.
The exit code the CLI returns is decided here: 1 when nothing could run (no conversation's replay
reached the provider), else 6 when there is at least one regression, else 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.messages.base import now_ms
from core.store.suite_views import BROKEN, OUTCOMES, SENT, ItemView, SuiteRunView

EXIT_OK = 0
EXIT_NOTHING_RAN = 1
EXIT_REGRESSION = 6
ENDING_FIELDS = ("diverged_step", "diverged_at", "reason", "error", "run_id")
"""Where and why an item's replay ended, and the run that holds it: under these names in every item listing."""


@dataclass(frozen=True, slots=True)
class Change:
    """One conversation whose outcome changed between the baseline and this run."""

    before: str
    item: ItemView

    @property
    def conversation_id(self) -> str:
        return self.item.conversation_id


@dataclass(frozen=True, slots=True)
class Report:
    """A suite run with its baseline (when one was chosen) and what the comparison found."""

    run: SuiteRunView
    baseline: SuiteRunView | None
    regressions: tuple[Change, ...]
    fixes: tuple[Change, ...]

    def counts(self) -> dict[str, int]:
        """Items by outcome, every outcome named (zero included)."""
        counts: dict[str, int] = dict.fromkeys(OUTCOMES, 0)
        for item in self.run.items:
            counts[item.outcome] += 1
        return counts

    @property
    def cancelled_by_cost(self) -> int:
        """Items not started because their replay's next call could pass ``--max-cost``."""
        return sum(1 for i in self.run.items if _capped(i) and i.run_id is None)

    @property
    def stopped_by_cost(self) -> int:
        """Step replays stopped midway because their next step could pass ``--max-cost``."""
        return sum(1 for i in self.run.items if _capped(i) and i.run_id is not None)

    @property
    def cost_usd(self) -> float:
        """The known costs summed (see ``cost_unknown`` for the items whose cost is not known)."""
        return round(sum(i.cost_usd or 0.0 for i in self.run.items), 10)

    @property
    def cost_unknown(self) -> int:
        """Items that reached the provider and have no known cost (a model the price table lacks)."""
        return sum(1 for i in self.run.items if i.outcome in SENT and i.cost_usd is None)

    @property
    def wall_ms(self) -> int:
        """From the run's creation to its last outcome (to now while it runs)."""
        end = self.run.finished_at if self.run.finished_at is not None else now_ms()
        return max(0, end - self.run.created_at)

    def tokens(self) -> dict[str, int]:
        """Input and output tokens summed over the items."""
        return {
            "input": sum(i.input_tokens or 0 for i in self.run.items),
            "output": sum(i.output_tokens or 0 for i in self.run.items),
        }

    def baseline_outcome(self, conversation_id: str) -> str | None:
        """The conversation's outcome in the baseline run, None without one."""
        if self.baseline is None:
            return None
        return next((i.outcome for i in self.baseline.items if i.conversation_id == conversation_id), None)

    @property
    def across(self) -> str | None:
        """The label of a baseline of another mode or comparison (asked for with ``--cross-baseline``), else None."""
        return cross_label(self.run, self.baseline)

    def exit_code(self) -> int:
        """1 nothing could run, 6 at least one regression, else 0."""
        if not any(i.outcome in SENT or (_capped(i) and i.run_id is not None) for i in self.run.items):
            return EXIT_NOTHING_RAN
        return EXIT_REGRESSION if self.regressions else EXIT_OK

    def to_json(self) -> dict[str, Any]:
        """The report as ``traceloupe suite run --json`` and ``suite show --json`` print it."""
        run = self.run
        before = {i.conversation_id: i.outcome for i in self.baseline.items} if self.baseline is not None else {}
        return {
            "suite": run.suite,
            "run_id": run.run_id,
            "status": run.status,
            "provider": run.provider,
            "model": run.model,
            "mode": run.mode,
            "comparison": run.comparison,
            "concurrency": run.concurrency,
            "max_cost": run.max_cost,
            "baseline": None if self.baseline is None else self.baseline.run_id,
            "baseline_comparison": None if self.baseline is None else self.baseline.comparison,
            "baseline_mode": None if self.baseline is None else self.baseline.mode,
            "across": self.across,
            "created_at": run.created_at,
            "started_by": run.started_by,
            "finished_at": run.finished_at,
            "totals": {
                "conversations": len(run.items),
                **self.counts(),
                "tokens": self.tokens(),
                "cost_usd": self.cost_usd,
                "cost_unknown": self.cost_unknown,
                "cancelled_by_max_cost": self.cancelled_by_cost,
                "stopped_by_max_cost": self.stopped_by_cost,
                "max_cost_left_usd": None if run.max_cost is None else round(run.max_cost - self.cost_usd, 10),
                "wall_ms": self.wall_ms,
            },
            "regressions": [_change_json(c) for c in self.regressions],
            "fixes": [_change_json(c) for c in self.fixes],
            "items": [_item_json(i, before.get(i.conversation_id), run.mode) for i in run.items],
            "exit_code": self.exit_code(),
        }


def cross_label(run: SuiteRunView, baseline: SuiteRunView | None) -> str | None:
    """What a report says about a baseline of another mode or comparison (None when it is of the same kind)."""
    if baseline is None or (baseline.mode == run.mode and baseline.comparison == run.comparison):
        return None
    return (
        f"across modes or comparisons: baseline mode {baseline.mode} compared by {baseline.comparison_text}, "
        f"this run mode {run.mode} compared by {run.comparison_text}"
    )


def build_report(run: SuiteRunView, baseline: SuiteRunView | None) -> Report:
    """Compare a run with its baseline (either may still be running: only outcomes already known count)."""
    if baseline is None:
        return Report(run, None, (), ())
    before = {i.conversation_id: i.outcome for i in baseline.items}
    regressions: list[Change] = []
    fixes: list[Change] = []
    for item in run.items:
        was = before.get(item.conversation_id)
        if was == "matched" and item.outcome in BROKEN:
            regressions.append(Change(was, item))
        elif was in BROKEN and item.outcome == "matched":
            assert was is not None
            fixes.append(Change(was, item))
    return Report(run, baseline, tuple(regressions), tuple(fixes))


def _capped(item: ItemView) -> bool:
    return item.outcome == "cancelled" and item.reason == "max_cost"


def _change_json(change: Change) -> dict[str, Any]:
    item = change.item
    return {
        "conversation_id": change.conversation_id,
        "before": change.before,
        "now": item.outcome,
        **_ending_json(item),
        "comparison": answer_json(item.detail),
    }


def _ending_json(item: ItemView) -> dict[str, Any]:
    return {name: getattr(item, name) for name in ENDING_FIELDS}


def answer_json(detail: dict[str, Any] | None) -> dict[str, Any] | None:
    """An item's final-answer comparison as the JSON reports show it (None when no final answers were compared)."""
    if not detail:
        return None
    keep = ("comparison", "score", "similarity", "threshold", "word_diff", "judge", "json")
    return {k: detail[k] for k in keep if k in detail}


def _item_json(item: ItemView, before: str | None, mode: str) -> dict[str, Any]:
    return {
        "conversation_id": item.conversation_id,
        "outcome": item.outcome,
        "baseline_outcome": before,
        **_ending_json(item),
        "run_kind": "steps" if mode == "steps" else "reply",
        "comparison": answer_json(item.detail),
        "attempts": item.attempt,
        "tokens": {"input": item.input_tokens, "output": item.output_tokens},
        "cost_usd": item.cost_usd,
        "cost_note": item.cost_note,
        "wall_ms": item.wall_ms,
    }
