"""What the store gives of suites (``core.store.suites``): frozen dataclasses holding no connection, and the closed
sets of names they use."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Mode = Literal["final", "steps"]
"""``final``: regenerate the final reply, as Re-run does; ``steps``: the agent replay of the last turn."""
MODES: tuple[Mode, ...] = get_args(Mode)

Outcome = Literal["pending", "running", "matched", "diverged", "failed", "refused", "cancelled"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
DONE: tuple[Outcome, ...] = ("matched", "diverged", "failed", "refused", "cancelled")
"""Outcomes an item keeps once it has one."""
SENT: tuple[Outcome, ...] = ("matched", "diverged", "failed")
"""Outcomes of an item whose replay reached the provider."""
BROKEN: tuple[Outcome, ...] = ("diverged", "failed")
"""What a regression is now (it was ``matched`` in the baseline)."""

SuiteRunStatus = Literal["running", "finished"]


@dataclass(frozen=True, slots=True)
class SuiteView:
    """A suite: its name, the filter that chose its conversations, and those conversations in order."""

    name: str
    filter: dict[str, Any]
    created_at: int
    conversations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SuiteSummary:
    """A suite as ``suite list`` shows it."""

    name: str
    filter: dict[str, Any]
    created_at: int
    members: int
    runs: int
    last_run_id: str | None


@dataclass(frozen=True, slots=True)
class ItemView:
    """One conversation of a suite run."""

    item_pk: int
    conversation_id: str
    position: int
    outcome: Outcome
    attempt: int
    diverged_step: int | None
    diverged_at: str | None
    reason: str | None
    error: str | None
    run_id: str | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    cost_note: str | None
    started_at: int | None
    finished_at: int | None
    wall_ms: int | None
    detail: dict[str, Any] | None = None
    """The final answers' comparison (``core.replay.answers``): its name, score, word diff, a judge's verdict."""


@dataclass(frozen=True, slots=True)
class SuiteRunView:
    """A suite run: how it was asked for, where it stands, and (when read with them) its items in suite order."""

    run_id: str
    suite: str
    provider: str
    model: str
    mode: Mode
    concurrency: int
    max_cost: float | None
    baseline_run_id: str | None
    status: SuiteRunStatus
    created_at: int
    finished_at: int | None
    items: tuple[ItemView, ...] = field(default_factory=tuple)
    comparison: str | None = None
    """How final answers were judged (``exact``, ``similar:T``, ``json``, ``judge:P/M``); None for a run
    recorded before the comparison was chosen (any final answer matched then)."""
    started_by: str | None = None
    """The account that started it; None when nobody was signed in."""

    @property
    def comparison_text(self) -> str:
        """The comparison as pages and reports name it."""
        return self.comparison or "none recorded (any final answer matched)"


@dataclass(frozen=True, slots=True)
class Progress:
    """How many items of a suite run have each outcome, and what they cost so far."""

    counts: dict[str, int]
    cost_usd: float

    @property
    def total(self) -> int:
        """Every item of the run."""
        return sum(self.counts.values())

    @property
    def done(self) -> int:
        """Items with an outcome."""
        return sum(self.counts.get(o, 0) for o in DONE)

    @property
    def remaining(self) -> int:
        """Items pending or running."""
        return self.total - self.done
