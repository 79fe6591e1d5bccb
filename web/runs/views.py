"""Typed contexts of the run templates: a run's live panel, the runs page, a comparison.

The replayed reply and the original are shown through the timeline's own card view model
(``web.timeline``), so they look exactly like the cards of the conversation; their anchors
are prefixed with the run id, so a panel on the conversation page never repeats a card's id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from core.messages.assistant import AssistantTextMessage
from core.messages.base import now_ms
from core.messages.union import Message
from core.providers import provider_named
from core.providers.diffing import format_change, structural_diff
from core.replay.run import DEFAULT_TIMEOUT
from core.store import RunSummary, RunView
from web import masking, urls
from web.replays.forms import RerunForm
from web.replays.models import model_warning
from web.replays.reply_diff import ReplyDiff, reply_diff
from web.request_options import body_parameters
from web.timeline import Card, Timeline, msg_anchor
from web.timeline.build import build_card, format_ts
from web.timeline.cards import AssistantBody
from web.timeline.order import Entry

if TYPE_CHECKING:
    from web.runs.step_views import StepRunPanel

STALE_AFTER_MS = int(DEFAULT_TIMEOUT * 1000) + 60_000
"""A run still ``running`` this long after it started will not finish: its panel stops polling and says so."""

FAILED_LABELS: dict[str, str] = {
    "http_error": "provider error",
    "rate_limited": "rate limited",
    "timeout": "timed out",
    "connection_error": "unreachable",
    "malformed": "unreadable answer",
    "refused": "refused",
    "error": "failed",
}


def detached_card(message: Message, prefix: str, timeline: Timeline | None = None, page_url: str = "") -> Card:
    """The card of one message outside its timeline: anchors prefixed, results linked as the timeline links them.

    With the conversation's ``timeline`` (and ``page_url``, its page), a tool call links to its result's card
    on the page that holds it; without one (a replayed reply, whose call ids are new), there is no result.
    """
    source = timeline if timeline is not None else Timeline([message])
    card = build_card(Entry(message, "message", None), source.order.calls_for([message]))
    body = card.body
    if isinstance(body, AssistantBody):
        calls = tuple(
            replace(c, anchor=f"{prefix}-{c.anchor}", result_page=_page_holding(page_url, c.result_card))
            if timeline is not None and c.result_card is not None
            else replace(c, anchor=f"{prefix}-{c.anchor}", result_anchor=None, result_card=None)
            for c in body.tool_calls
        )
        body = replace(body, tool_calls=calls)
    return replace(card, anchor=f"{prefix}-{card.anchor}", body=body, placement="message", parent_anchor=None)


def _page_holding(page_url: str, card_anchor: str) -> str:
    """The conversation page that opens on the slice holding this card (the timeline's ``?at=``)."""
    return f"{page_url}{urls.query(at=card_anchor)}"


class _Run(Protocol):
    @property
    def run_id(self) -> str: ...
    @property
    def conversation_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def started_at(self) -> int: ...


class RunRegion(urls.ConversationLinks):
    """What a run's live region and a step run's have alike: the links of its conversation, whether it still goes.

    A subclass holds the ``run``; ``stale_after_ms`` is how long after its start it may still be going.
    """

    __slots__ = ()
    run: _Run

    @property
    def conversation_id(self) -> str:
        return self.run.conversation_id

    @property
    def stale_after_ms(self) -> int:
        return STALE_AFTER_MS

    @property
    def running(self) -> bool:
        return self.run.status == "running"

    @property
    def stale(self) -> bool:
        """Still ``running`` long after it could have ended: the server stopped while it was in flight."""
        return self.running and now_ms() - self.run.started_at > self.stale_after_ms

    @property
    def started(self) -> str:
        return format_ts(self.run.started_at)


@dataclass(frozen=True, slots=True)
class RunPanel(RunRegion):
    """One run's live region (``id="run-<run_id>"``): status, figures, and when done the cards and the diff."""

    run: RunView | RunSummary
    original: Card | None
    replay: Card | None
    diff: ReplyDiff | None

    @property
    def anchor(self) -> str:
        return f"run-{self.run.run_id}"

    @property
    def url(self) -> str:
        return urls.run(self.run.run_id)

    @property
    def upto_anchor(self) -> str:
        return msg_anchor(self.run.up_to_msg_id or "")

    @property
    def failed(self) -> bool:
        return self.run.status not in ("running", "ok")

    @property
    def label(self) -> str:
        return {"running": "running…", "ok": "replied"}.get(self.run.status, FAILED_LABELS.get(self.run.status, ""))

    @property
    def model_warning(self) -> str | None:
        """Set when the model is outside the provider's families (it was typed on purpose)."""
        return model_warning(provider_named(self.run.provider), self.run.model)

    @property
    def sent(self) -> list[tuple[str, str]]:
        """The parameters the recorded request body carried (max tokens, sampling, thinking): what was sent, the
        request options a Re-run form gave included."""
        return body_parameters(self.run.request_body) if isinstance(self.run, RunView) else []


def run_panel(
    run: RunView | RunSummary,
    original: Message | None,
    reply: AssistantTextMessage | None,
    timeline: Timeline | None = None,
) -> RunPanel:
    """The panel of a run; the cards and the diff once it has finished.

    ``timeline`` is the conversation's: the original reply's tool calls link to their results in it.
    """
    url = urls.conversation(run.conversation_id)
    if run.error:  # a provider's error can quote the request, trace text and all
        run = replace(run, error=masking.mask(run.error))
    if run.status == "running":
        return RunPanel(run, None, None, None)
    prefix = f"run-{run.run_id[:12]}"
    original_card = detached_card(original, f"{prefix}-original", timeline, url) if original is not None else None
    reply_card = detached_card(reply, f"{prefix}-replay") if reply is not None else None
    diff = reply_diff(original, reply, "original", f"{run.provider} {run.model}") if reply is not None else None
    return RunPanel(run, original_card, reply_card, diff)


@dataclass(frozen=True, slots=True)
class ReplaysPage(urls.ConversationLinks):
    """``/conversations/{id}/replays``: every run of a conversation, the Re-run form and the compare form."""

    conversation_id: str
    runs: Sequence[RunSummary]
    form: RerunForm
    step_runs: Sequence[StepRunPanel] = ()
    """Each step run's panel, without its recorded steps: the list reads its figures."""
    compare_url: str = urls.RUNS_COMPARE

    def run_url(self, run: RunSummary) -> str:
        return urls.run(run.run_id)

    @property
    def run_choices(self) -> list[tuple[str, str]]:
        """The runs as the compare form offers them: id, and its short id, provider, model and status."""
        return [(r.run_id, f"{r.run_id[:12]} · {r.provider} {r.model} · {r.status}") for r in self.runs]

    @property
    def step_run_choices(self) -> list[tuple[str, str]]:
        """The step runs as their compare form offers them: id, and its short id, provider, model, turn and state."""
        return [_step_choice(p) for p in self.step_runs]


def _step_choice(panel: StepRunPanel) -> tuple[str, str]:
    run = panel.run
    return run.run_id, f"{run.run_id[:12]} · {run.provider} {run.model} · turn {run.turn_msg_id} · {panel.label}"


@dataclass(frozen=True, slots=True)
class ComparePage:
    """``/runs/compare?a=&b=``: two runs' replies side by side and their diff; the request bodies' diff loads apart.

    A replay of a long trace sends its whole history: the two request bodies are read and diffed by
    ``requests_url`` (``RequestDiff``), so the page itself costs the same for any trace.
    """

    left: RunPanel
    right: RunPanel
    diff: ReplyDiff

    @property
    def requests_url(self) -> str:
        return urls.runs_compare_requests(self.left.run.run_id, self.right.run.run_id)

    @property
    def different_targets(self) -> bool:
        """The two runs regenerated different messages: their replies answer different requests."""
        return self.left.run.up_to_msg_id != self.right.run.up_to_msg_id


def compare_page(
    left: RunSummary,
    right: RunSummary,
    left_reply: AssistantTextMessage | None,
    right_reply: AssistantTextMessage | None,
) -> ComparePage:
    """Two runs compared; a failed run compares as an empty reply."""
    a = replace(run_panel(left, None, left_reply), original=None)
    b = replace(run_panel(right, None, right_reply), original=None)
    diff = reply_diff(left_reply, right_reply, f"{left.provider} {left.model}", f"{right.provider} {right.model}")
    return ComparePage(a, b, diff)


@dataclass(frozen=True, slots=True)
class RequestDiff:
    """How two runs' request bodies differ (``id="request-diff"``, the compare page's deferred part)."""

    left: RunView
    right: RunView
    changes: tuple[str, ...]

    @property
    def compare_url(self) -> str:
        return urls.runs_compare(self.left.run_id, self.right.run_id)


def request_diff(left: RunView, right: RunView) -> RequestDiff:
    """The structural diff of what the two runs sent."""
    changes = structural_diff(left.request_body, right.request_body)
    return RequestDiff(left, right, tuple(format_change(c) for c in changes))
