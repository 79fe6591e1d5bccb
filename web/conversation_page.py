"""One conversation's page context: the timeline a page of cards at a time, its replay controls and run count.

The conversation page draws it, and the payload page draws it again as its card column.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.providers.dialects import DEFAULT_PROVIDER
from web import masking, urls
from web.replays.forms import RerunForms, StepForms, step_forms
from web.settings import Settings
from web.source import Loaded, StoreSource
from web.timeline import Page
from web.timeline.seek import ROLE_FILTERS, SEEK_LABELS, SEEK_TITLES, SeekTarget, anchor_at


@dataclass(frozen=True)
class RunCount:
    """The conversation header's run count (``runs/_run_count.html``, id ``run-count``) and the page listing them."""

    runs: int
    url: str

    @classmethod
    def of(cls, source: StoreSource, conversation_id: str) -> RunCount:
        return cls(source.summary(conversation_id).runs, urls.replays(conversation_id))


@dataclass(frozen=True, slots=True)
class ConversationPage(urls.ConversationLinks):
    """``/conversations/{id}``: the timeline, one page of cards at a time (of one role's cards, when filtered)."""

    conversation_id: str
    title: str
    timeline: Page
    page_size: int
    damaged: int
    rerun: RerunForms
    """The Re-run controls of the page (the conversation's and each assistant card's)."""
    steps: StepForms | None = None
    """The Replay steps controls (the conversation's last turn and each user card that has trace records)."""
    runs: int = 0
    provider: str = DEFAULT_PROVIDER
    kind: str = ""
    """The role the timeline is filtered to ("" for every card)."""
    at: str | None = None
    """The card the page was opened at (a jump's target): where "next ..." searches from without JavaScript."""
    cards: int = 0
    """Cards in the whole timeline, unfiltered."""
    last_anchor: str | None = None
    notice: str = ""
    live: bool = False
    """Still receiving spans over OTLP: the top of the unfiltered timeline reloads itself in place."""
    kinds: dict[str, str] = field(default_factory=lambda: ROLE_FILTERS)
    seeks: dict[SeekTarget, str] = field(default_factory=lambda: SEEK_LABELS)
    seek_titles: dict[SeekTarget, str] = field(default_factory=lambda: SEEK_TITLES)

    @property
    def polls(self) -> bool:
        """Whether the timeline asks for its first page again every few seconds (live, at the top, unfiltered)."""
        return self.live and self.timeline.offset == 0 and not self.kind

    @property
    def next_url(self) -> str | None:
        if self.timeline.next_offset is None:
            return None
        return f"{self.base_url}{urls.query(offset=str(self.timeline.next_offset), kind=self.kind)}"

    @property
    def previous_url(self) -> str | None:
        if self.timeline.offset == 0:
            return None
        return f"{self.base_url}{urls.query(offset=str(max(0, self.timeline.offset - self.page_size)), kind=self.kind)}"

    @property
    def base_url(self) -> str:
        """The page the timeline's paging and filter links build on (the payload page's card column too)."""
        return self.conversation_url

    @property
    def start_url(self) -> str:
        """The first page (unfiltered), at its top."""
        return f"{self.base_url}#timeline"

    @property
    def end_url(self) -> str:
        """The page that holds the last card, opened directly, at that card."""
        if self.last_anchor is None:
            return self.start_url
        last_page = max(0, self.cards - self.page_size)  # a full page ending at the last card
        return f"{self.base_url}{urls.query(offset=str(last_page) if last_page else None)}#{self.last_anchor}"

    def seek_url(self, target: str) -> str:
        """The next card of a kind (damaged, error, divergence) past the card the page was opened at."""
        return urls.seek(self.conversation_id, target, after=self.at)

    def payload_url(self, upto: str | None = None, provider: str | None = None) -> str:
        """The payload page of ``provider`` or the default one (for the request that produced ``upto``)."""
        return urls.payload(self.conversation_id, provider or self.provider, upto=upto)

    def diff_url(self, left: str, right: str) -> str:
        return urls.diff(self.conversation_id, left, right)

    @property
    def runs_api_url(self) -> str:
        return urls.api_runs(self.conversation_id)

    @property
    def run_count(self) -> RunCount:
        return RunCount(self.runs, urls.replays(self.conversation_id))

    def field_url(self, msg_id: str, field: str) -> str:
        """Where a card's clipped field is read whole."""
        return urls.record_field(self.conversation_id, msg_id, field)

    def field_api_url(self, msg_id: str, field: str) -> str:
        """The same, as JSON: what the page's script fetches for "show all"."""
        return urls.api_record_field(self.conversation_id, msg_id, field)


def conversation_page(
    loaded: Loaded,
    settings: Settings,
    rerun: RerunForms,
    offset: int = 0,
    through: str | None = None,
    *,
    kind: str = "",
    at: str | None = None,
    notice: str = "",
) -> ConversationPage:
    """The timeline context for one slice of cards (shared with the payload page's card column).

    ``kind`` filters the timeline to one role's cards, paged over those cards alone.
    """
    timeline = loaded.timeline
    if kind:
        page = timeline.page_at(timeline.positions_of(kind), offset, settings.page_size)
    else:
        page = timeline.page(offset, settings.page_size, through=through, max_through=settings.max_jump_cards)
    summary = loaded.summary
    return ConversationPage(
        conversation_id=summary.conversation_id,
        title=masking.mask(summary.title) or "(no user text)",
        timeline=page,
        page_size=settings.page_size,
        damaged=summary.damaged,
        rerun=rerun,
        steps=step_forms(summary.conversation_id, rerun.choices, timeline),
        runs=summary.runs,
        provider=settings.default_provider,
        kind=kind,
        at=at,
        cards=len(timeline),
        last_anchor=anchor_at(timeline, len(timeline) - 1) if len(timeline) else None,
        notice=notice,
    )
