"""Two step runs of one turn compared step by step: where the second run leaves the first one's path.

Each row holds step k of run A and of run B and A's step judged against B's by the very rule a
step replay uses against the recording (``core.replay.compare.compare_step``): same calls, same
final answer, or diverged with its reason. The first row where they part is marked. Final answers are
compared by B's recorded comparison when it needs no provider (a page never calls a judge), else by
``similar`` at its default threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.messages.union import MESSAGE_ADAPTER
from core.replay.answers import DEFAULT_COMPARISON, AnswerComparison, AnswerJudge, parse_comparison, plain_judge
from core.replay.compare import Comparison, compare_messages
from core.store.step_runs import StepRunView, StepView
from web.runs.step_views import (
    REASON_LABELS,
    VERDICT_LABELS,
    ArgumentChange,
    ReplayedSide,
    StepRunPanel,
    argument_changes,
    step_run_panel,
)


@dataclass(frozen=True, slots=True)
class CompareRow:
    """Step ``index`` of both runs, and whether B made the calls A made (None when one side has no step)."""

    index: int
    recorded_msg_id: str | None
    a: ReplayedSide | None
    b: ReplayedSide | None
    agreement: Comparison | None
    first_difference: bool

    @property
    def agreement_label(self) -> str:
        if self.agreement is None:
            return "only one run reached this step"
        label = VERDICT_LABELS.get(self.agreement.verdict, self.agreement.verdict)
        if self.agreement.verdict == "diverged" and self.agreement.reason:
            return f"{label}: {REASON_LABELS.get(self.agreement.reason, self.agreement.reason)}"
        return label

    @property
    def changes(self) -> tuple[ArgumentChange, ...]:
        """Where B's arguments differ from A's (``recorded`` is A's value, ``replayed`` B's)."""
        return argument_changes(self.agreement.detail) if self.agreement is not None else ()

    @property
    def agree(self) -> bool:
        return self.agreement is not None and self.agreement.verdict != "diverged"


@dataclass(frozen=True, slots=True)
class StepComparePage:
    """``/runs/compare?a=&b=`` for two step runs: their figures side by side and their steps row by row."""

    left: StepRunPanel
    right: StepRunPanel
    rows: tuple[CompareRow, ...]

    @property
    def different_turns(self) -> bool:
        return self.left.run.turn_msg_id != self.right.run.turn_msg_id

    @property
    def first_difference(self) -> CompareRow | None:
        return next((r for r in self.rows if r.first_difference), None)

    @property
    def replays_url(self) -> str:
        return self.left.replays_url


def step_compare_page(left: StepRunView, right: StepRunView) -> StepComparePage:
    """Two step runs compared (either may still be running: the rows it has are compared)."""
    a, b = step_run_panel(left, None), step_run_panel(right, None)
    a_steps, b_steps = {s.index: s for s in left.steps}, {s.index: s for s in right.steps}
    answers = plain_judge(page_comparison(right.comparison))
    rows: list[CompareRow] = []
    found = False
    for k in range(1, max([0, *a_steps, *b_steps]) + 1):
        sa, sb = a_steps.get(k), b_steps.get(k)
        agreement = _agreement(sa, sb, answers) if sa is not None and sb is not None else None
        first = not found and (agreement is None or agreement.verdict == "diverged")
        found = found or first
        side_a = next((r.replayed for r in a.rows if r.index == k), None)
        side_b = next((r.replayed for r in b.rows if r.index == k), None)
        either = sa if sa is not None else sb
        recorded = either.recorded_msg_id if either is not None else None
        rows.append(CompareRow(k, recorded, side_a, side_b, agreement, first))
    return StepComparePage(a, b, tuple(rows))


def page_comparison(recorded: str | None) -> AnswerComparison:
    """A run's comparison when a page can apply it (not a judge), else the default."""
    comparison = parse_comparison(recorded) if recorded else DEFAULT_COMPARISON
    return DEFAULT_COMPARISON if comparison.kind == "judge" else comparison


def _agreement(a: StepView, b: StepView, answers: AnswerJudge) -> Comparison | None:
    """B's step judged against A's as a replay is judged against the recording; None when one has no reply."""
    if a.reply is None or b.reply is None:
        return None
    ma, mb = MESSAGE_ADAPTER.validate_python(a.reply), MESSAGE_ADAPTER.validate_python(b.reply)
    return compare_messages(mb, ma, answers=answers)
