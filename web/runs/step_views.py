"""A step run's page as its template reads it: the recorded and the replayed steps side by side, row by row.

Row k holds the recorded step k (its calls or its answer, linked to its card) and the replayed
step k (verdict, reason with its evidence, tokens, cost, latency). Recorded steps past the end of
the run are shown as not reached; while the run goes, the next row says which step is being sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from core.replay.sent_tools import INFERRED_WARNING, params_said, tools_said
from core.replay.turns import RecordedStep
from core.store.step_runs import StepRunView, StepView
from web import masking, urls
from web.replays.reply_diff import TextSegment
from web.runs.views import STALE_AFTER_MS, RunRegion
from web.timeline import msg_anchor

STATUS_LABELS: dict[str, str] = {
    "running": "running…",
    "matched": "matched",
    "diverged": "diverged",
    "failed": "failed",
    "refused": "refused",
    "capped": "stopped by a limit",
}
VERDICT_LABELS: dict[str, str] = {"same": "same calls", "same_final": "same final answer", "diverged": "diverged",
                                  "failed": "failed"}  # fmt: skip
REASON_LABELS: dict[str, str] = {
    "different_tool": "called a different tool",
    "different_arguments": "same tools, different arguments",
    "extra_calls": "made extra calls",
    "missing_calls": "left out recorded calls",
    "answered_instead_of_calling": "answered instead of calling tools",
    "called_instead_of_answering": "called tools instead of answering",
    "different_answer": "a different final answer",
}


@dataclass(frozen=True, slots=True)
class CallView:
    """One tool call: its name and its arguments as indented JSON (or as written, when not JSON)."""

    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ArgumentChange:
    """One JSON pointer where a call's arguments differ: the recorded value and the replayed one."""

    call: str
    path: str
    op: str
    recorded: str
    replayed: str


@dataclass(frozen=True, slots=True)
class RecordedSide:
    """A recorded step: its record, where its card is, what it called or answered."""

    msg_id: str
    url: str
    calls: tuple[CallView, ...]
    text: str
    results: int


@dataclass(frozen=True, slots=True)
class ReplayedSide:
    """A replayed step: the verdict and its evidence, and what the step cost."""

    step: StepView
    calls: tuple[CallView, ...]
    text: str | None
    changes: tuple[ArgumentChange, ...]
    """``different_arguments``: the JSON diff of the arguments, pointer by pointer."""
    words: tuple[TextSegment, ...]
    """``same_final``: the word diff of the two answers."""
    similarity: float | None
    unmatched: tuple[tuple[str, CallView], ...]
    """Other divergences: the calls left unmatched on each side (``recorded`` or ``replayed``)."""
    answer: str = ""
    """Two final answers: the comparison that judged them, its score or the judge's verdict and reasoning."""

    @property
    def verdict_label(self) -> str:
        return VERDICT_LABELS.get(self.step.verdict, self.step.verdict)

    @property
    def reason_label(self) -> str:
        reason = self.step.reason or ""
        return REASON_LABELS.get(reason, reason)

    @property
    def cost(self) -> str:
        return usd(self.step.cost_usd)

    @property
    def words_same(self) -> bool:
        return all(w.op == "same" for w in self.words)


RowState = Literal["done", "sending", "pending", "not_reached"]


@dataclass(frozen=True, slots=True)
class StepRow:
    """Row ``index``: the recorded step and the replayed step at that position (either may be missing)."""

    index: int
    recorded: RecordedSide | None
    replayed: ReplayedSide | None
    state: RowState
    first_divergence: bool
    highlighted: bool
    permalink: str

    @property
    def anchor(self) -> str:
        return f"step-{self.index}"


@dataclass(frozen=True, slots=True)
class StepRunPanel(RunRegion):
    """A step run's live region (``id="step-run-<run_id>"``): progress, totals and the aligned steps."""

    run: StepRunView
    rows: tuple[StepRow, ...]
    at: int | None
    recorded_known: bool
    """False when the turn could not be read back (the conversation was replaced since)."""
    compact: bool = False
    """The region as it sits on the timeline: figures and one chip per step, the steps on the run's page."""

    @property
    def anchor(self) -> str:
        return f"step-run-{self.run.run_id}"

    @property
    def url(self) -> str:
        return urls.step_run(self.run.run_id)

    @property
    def poll_url(self) -> str:
        """The live region's own URL, keeping the step it was opened at."""
        return f"{self.url}{urls.query(at=str(self.at) if self.at else None, compact='1' if self.compact else None)}"

    @property
    def api_url(self) -> str:
        return urls.api_step_run(self.run.run_id)

    @property
    def turn_url(self) -> str:
        return urls.record(self.run.conversation_id, msg_anchor(self.run.turn_msg_id))

    @property
    def stale_after_ms(self) -> int:
        """A step run may send up to ``max_steps`` requests, each as long as a Re-run's."""
        return STALE_AFTER_MS * max(1, self.run.max_steps)

    @property
    def label(self) -> str:
        return STATUS_LABELS.get(self.run.status, self.run.status)

    @property
    def progress(self) -> str:
        """The progress figure: "step k of about n" while the run goes, then how many steps were replayed."""
        done, recorded = len(self.run.steps), self.run.recorded_steps
        if self.running:
            return f"step {min(done + 1, self.run.max_steps)} of about {recorded}"
        return f"{done} of {recorded} recorded step{'' if recorded == 1 else 's'} replayed"

    @property
    def cost(self) -> str:
        return usd(self.run.cost_usd)

    @property
    def tools_line(self) -> str:
        """Which tools every step sent and where they came from."""
        return tools_said(self.run.tools_source, self.run.tool_names, self.run.tool_choice)

    @property
    def params_line(self) -> str | None:
        """The generation parameters given over the stored request (None: every step sent the stored ones)."""
        return params_said(self.run.params)

    @property
    def tools_warning(self) -> str | None:
        """Beside the verdict when the tools were inferred: the model did not see the agent's own schemas."""
        return INFERRED_WARNING if self.run.tools_source == "inferred" else None

    @property
    def divergence(self) -> StepRow | None:
        return next((r for r in self.rows if r.first_divergence), None)


def usd(value: float | None) -> str:
    """A cost for reading: ``$0.000123``; "unknown" when there is none."""
    return "unknown" if value is None else f"${value:.6f}"


def step_run_panel(
    run: StepRunView, recorded: Sequence[RecordedStep] | None, at: int | None = None, *, compact: bool = False
) -> StepRunPanel:
    """The panel of a step run; ``recorded`` is the turn's recorded steps (None when they cannot be read)."""
    if run.error:  # a provider's error can quote the request, trace text and all
        run = replace(run, error=masking.mask(run.error))
    by_index = {s.index: s for s in run.steps}
    recorded_by_index = {s.index: s for s in recorded or ()}
    count = max([len(recorded or ()), *by_index])
    if run.status == "running":
        count = max(count, len(run.steps) + 1)
    diverged = next((s.index for s in run.steps if s.verdict == "diverged"), None)
    rows = []
    for k in range(1, count + 1):
        step = by_index.get(k)
        state: RowState = "done"
        if step is None and run.status == "running":
            state = "sending" if k == len(run.steps) + 1 else "pending"
        elif step is None:
            state = "not_reached"
        rec = recorded_by_index.get(k)
        rows.append(
            StepRow(
                index=k,
                recorded=_recorded_side(run.conversation_id, rec) if rec is not None else None,
                replayed=_replayed_side(step) if step is not None else None,
                state=state,
                first_divergence=k == diverged,
                highlighted=k == at,
                permalink=urls.step_run(run.run_id, at=k),
            )
        )
    return StepRunPanel(run, tuple(rows), at, recorded is not None, compact)


def _recorded_side(conversation_id: str, step: RecordedStep) -> RecordedSide:
    msg = step.message
    calls = tuple(CallView(c.name, pretty(_json_or_text(c.arguments))) for c in msg.tool_calls or ())
    text = msg.content if isinstance(msg.content, str) else ""
    results = sum(len(o.tool_reses or ()) or 1 for o in step.outputs)
    return RecordedSide(msg.msg_id, urls.record(conversation_id, msg_anchor(msg.msg_id)), calls, text, results)


def _replayed_side(step: StepView) -> ReplayedSide:
    detail = step.detail or {}
    calls = tuple(CallView(str(c["name"]), pretty(c["arguments"])) for c in step.tool_calls())
    changes = argument_changes(detail)
    words = tuple(_segments(detail.get("word_diff") or ()))
    similarity = detail.get("similarity")
    unmatched: tuple[tuple[str, CallView], ...] = ()
    if step.reason != "different_arguments":
        unmatched = tuple(
            (side, CallView(str(c.get("name", "")), pretty(c.get("arguments"))))
            for side in ("recorded", "replayed")
            for c in detail.get(f"{side}_calls") or ()
        )
    similarity = float(similarity) if isinstance(similarity, int | float) else None
    answer = answer_verdict(detail) if "comparison" in detail else ""
    return ReplayedSide(step, calls, step.text(), changes, words, similarity, unmatched, answer)


def answer_verdict(detail: dict[str, Any]) -> str:
    """How two final answers were judged, without the word diff (the row draws it): comparison, score or verdict."""
    line = f"compared by {detail.get('comparison')}"
    judge, score, bar = detail.get("judge"), detail.get("score"), detail.get("threshold")
    if isinstance(judge, dict) and judge.get("verdict"):
        reasoning = f": {judge['reasoning']}" if judge.get("reasoning") else ""
        return f"{line}: the judge says {judge['verdict']}{reasoning}"
    if isinstance(score, int | float):
        return f"{line}: score {score:.2f}" + (f" (bar {bar:g})" if isinstance(bar, int | float) else "")
    return line


def argument_changes(detail: dict[str, Any]) -> tuple[ArgumentChange, ...]:
    """A ``different_arguments`` comparison's JSON diff (``core.replay.compare.json_diff``), pointer by pointer."""
    return tuple(
        ArgumentChange(
            str(d.get("name", "")),
            c.get("path") or "/",
            str(c.get("op", "")),
            pretty(c.get("recorded")),
            pretty(c.get("replayed")),
        )
        for d in detail.get("arguments_diff") or ()
        for c in d.get("diff") or ()
    )


def _segments(ops: Sequence[dict[str, Any]]) -> list[TextSegment]:
    """``core.replay.compare.text_diff``'s opcodes as kept, removed and added runs of words."""
    out: list[TextSegment] = []
    for op in ops:
        recorded, replayed = str(op.get("recorded") or ""), str(op.get("replayed") or "")
        if op.get("op") == "equal":
            out.append(TextSegment("same", recorded))
            continue
        if recorded:
            out.append(TextSegment("removed", recorded))
        if replayed:
            out.append(TextSegment("added", replayed))
    return out


def pretty(value: Any) -> str:
    """A JSON value as indented JSON; a string that is not JSON as it is."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True)


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return text
