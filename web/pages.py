"""Typed page contexts: each template reads one of these as ``page`` and nothing else from the request."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from core.providers import Degradation
from core.store import ConversationSummary
from web import masking, urls
from web.diffview import Comparison
from web.integrity import Damage
from web.jsonview import Rendered
from web.listing import KIND_FILTERS, SORT_LABELS, ListQuery
from web.payloads import Built
from web.snippets import Snippet
from web.timeline import Page
from web.timeline.order import msg_anchor
from web.timeline.seek import ROLE_FILTERS, SEEK_LABELS, SEEK_TITLES, SeekTarget


@dataclass(frozen=True, slots=True)
class IndexPage:
    """``/``: the conversations matching the query, one keyset page at a time."""

    conversations: Sequence[ConversationSummary]
    query: ListQuery
    next_url: str | None
    empty_store: bool
    kinds: dict[str, str] = field(default_factory=lambda: KIND_FILTERS)
    sorts: dict[str, str] = field(default_factory=lambda: SORT_LABELS)
    snippets: Mapping[str, Snippet] = field(default_factory=dict)
    """Why each listed conversation matched the search (by conversation id)."""

    def url_of(self, summary: ConversationSummary) -> str:
        return urls.conversation(summary.conversation_id)


@dataclass(frozen=True, slots=True)
class ConversationPage:
    """``/conversations/{id}``: the timeline, one page of cards at a time (of one role's cards, when filtered)."""

    conversation_id: str
    title: str
    timeline: Page
    page_size: int
    damaged: int
    runs: int = 0
    provider: str = "openai"
    kind: str = ""
    """The role the timeline is filtered to ("" for every card)."""
    at: str | None = None
    """The card the page was opened at (a jump's target): where "next ..." searches from without JavaScript."""
    cards: int = 0
    """Cards in the whole timeline, unfiltered."""
    last_anchor: str | None = None
    notice: str = ""
    kinds: dict[str, str] = field(default_factory=lambda: ROLE_FILTERS)
    seeks: dict[SeekTarget, str] = field(default_factory=lambda: SEEK_LABELS)
    seek_titles: dict[SeekTarget, str] = field(default_factory=lambda: SEEK_TITLES)

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
        return urls.conversation(self.conversation_id)

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
    def replays_url(self) -> str:
        return urls.replays(self.conversation_id)

    @property
    def secrets_url(self) -> str:
        return urls.secrets(self.conversation_id)

    def field_url(self, msg_id: str, field: str) -> str:
        """Where a card's clipped field is read whole."""
        return urls.record_field(self.conversation_id, msg_id, field)

    def field_api_url(self, msg_id: str, field: str) -> str:
        """The same, as JSON: what the page's script fetches for "show all"."""
        return urls.api_record_field(self.conversation_id, msg_id, field)


@dataclass(frozen=True, slots=True)
class WarningView:
    """One degradation, linked to the card of the message it names."""

    msg_id: str | None
    anchor: str | None
    element: str
    reason: str

    @classmethod
    def of(cls, warning: Degradation) -> WarningView:
        anchor = msg_anchor(warning.msg_id) if warning.msg_id else None
        # A reason can quote the content it degraded (a URL with a key in its query).
        return cls(warning.msg_id, anchor, masking.mask(warning.element), masking.mask(warning.reason))


@dataclass(frozen=True, slots=True)
class RequestChoice:
    """The request shown: provider, cut (``upto``), repair and model; builds the links that change one of them.

    The model stays in links to the same provider and is dropped when the provider changes (a model name
    belongs to one provider).
    """

    conversation_id: str
    provider: str
    upto: str | None
    repair: bool
    providers: Sequence[str]
    choices: Sequence[tuple[str, str]]
    choices_total: int
    model: str | None = None
    default_model: str = ""
    models: Sequence[str] = ()

    @property
    def base_url(self) -> str:
        return urls.conversation(self.conversation_id)

    @property
    def secrets_url(self) -> str:
        return urls.secrets(self.conversation_id)

    def _model_for(self, provider: str | None) -> str | None:
        return self.model if provider in (None, self.provider) else None

    def payload_url(self, provider: str | None = None, *, repair: bool | None = None) -> str:
        fix = self.repair if repair is None else repair
        return urls.payload(
            self.conversation_id, provider or self.provider, upto=self.upto, repair=fix, model=self._model_for(provider)
        )

    def payload_path(self) -> str:
        """The payload page's path without a query: the action of a GET form that carries its own fields."""
        return urls.payload(self.conversation_id, self.provider)

    def api_url(self, provider: str | None = None) -> str:
        return urls.api_payload(
            self.conversation_id,
            provider or self.provider,
            upto=self.upto,
            repair=self.repair,
            model=self._model_for(provider),
        )

    def phases_url(self) -> str:
        return urls.phases(self.conversation_id, self.provider, upto=self.upto, repair=self.repair, model=self.model)

    def diff_url(self, left: str, right: str, *, repair: bool | None = None) -> str:
        fix = self.repair if repair is None else repair
        return urls.diff(self.conversation_id, left, right, upto=self.upto, repair=fix)

    @property
    def diff_path(self) -> str:
        """The diff page's path without a query: the action of its GET form."""
        return urls.diff(self.conversation_id)

    def api_diff_url(self, left: str, right: str) -> str:
        return urls.api_diff(self.conversation_id, left, right, upto=self.upto, repair=self.repair)


@dataclass(frozen=True, slots=True)
class PayloadPage:
    """``/conversations/{id}/payload/{provider}``: the body highlighted, its warnings, the cards beside it."""

    title: str
    request: RequestChoice
    built: Built
    rendered: Rendered | None
    warnings: Sequence[WarningView]
    cards: ConversationPage
    damaged_records: int
    attachments_root: bool

    @property
    def conversation_id(self) -> str:
        return self.request.conversation_id


@dataclass(frozen=True, slots=True)
class PhaseView:
    """One assembly phase's output, pretty-printed (cut when huge)."""

    name: str
    text: str
    truncated: bool


@dataclass(frozen=True, slots=True)
class PhasesPanel:
    """The ``#payload-phases`` widget: every phase's output and the provenance map, on demand."""

    title: str
    request: RequestChoice
    built: Built
    phases: Sequence[PhaseView]
    provenance: PhaseView


@dataclass(frozen=True, slots=True)
class DiffPage:
    """``/conversations/{id}/diff?left=P&right=Q``: two bodies side by side, changes grouped by cause."""

    title: str
    request: RequestChoice
    left: Built
    right: Built
    comparison: Comparison | None
    left_rendered: Rendered | None
    right_rendered: Rendered | None
    max_listed: int = 200

    @property
    def conversation_id(self) -> str:
        return self.request.conversation_id

    @property
    def damaged(self) -> Built | None:
        """The side whose request could not be built, if any."""
        return self.left if self.left.damaged else self.right if self.right.damaged else None


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What one uploaded file did: the CLI's summary line or its error line, and the conversations it touched."""

    filename: str
    ok: bool
    line: str
    conversations: Sequence[str] = ()
    more_conversations: int = 0
    imported: int = 0
    """Messages stored now: 0 for a file whose messages were all stored already (a no-op re-import)."""

    def url_of(self, conversation_id: str) -> str:
        return urls.conversation(conversation_id)


@dataclass(frozen=True, slots=True)
class ImportPage:
    """``/import``: the upload form, and after a POST, one result per file."""

    max_bytes: int
    results: Sequence[ImportResult] = ()

    @property
    def failed(self) -> int:
        return sum(not r.ok for r in self.results)

    @property
    def imported(self) -> int:
        """Files that stored at least one message."""
        return sum(r.ok and r.imported > 0 for r in self.results)

    @property
    def unchanged(self) -> int:
        """Files read without error whose every message was stored already."""
        return sum(r.ok and r.imported == 0 for r in self.results)


@dataclass(frozen=True, slots=True)
class CheckFinding:
    """One damaged record found in an uploaded file."""

    where: str
    damage: Damage


@dataclass(frozen=True, slots=True)
class CheckPage:
    """``/check``: an uploaded file read with the CLI's rules, and what it holds."""

    filename: str | None = None
    error: str | None = None
    messages: int = 0
    records: int = 0
    conversations: int = 0
    findings: Sequence[CheckFinding] = ()
    max_bytes: int = 0


@dataclass(frozen=True, slots=True)
class ErrorPage:
    """Any error, in the app's layout: what happened, in words."""

    status_code: int
    title: str
    detail: str
    path: str
    command: str | None = None
