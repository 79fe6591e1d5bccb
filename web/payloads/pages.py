"""The payload page's contexts: the request shown, its warnings, the body, the phases panel."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.providers import Degradation
from web import masking, urls
from web.conversations.pages import ConversationPage
from web.payloads.builder import Built
from web.payloads.facts import BuildFacts
from web.payloads.windows import WindowedBody
from web.timeline.order import msg_anchor


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

    def window_url(self, n: int) -> str:
        return urls.payload_window(
            self.conversation_id, self.provider, n, upto=self.upto, repair=self.repair, model=self.model
        )

    def windows_map_url(self) -> str:
        return urls.payload_windows_map(
            self.conversation_id, self.provider, upto=self.upto, repair=self.repair, model=self.model
        )

    def download_url(self, provider: str | None = None) -> str:
        return urls.payload_download(
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
    built: BuildFacts
    body: WindowedBody | None
    """The body by windows: the first highlighted, the rest loaded as the reader scrolls."""
    warnings: Sequence[WarningView]
    cards: ConversationPage
    damaged_records: int
    attachments_root: bool
    warnings_total: int = 0
    """All the warnings: ``warnings`` lists the first ``MAX_WARNINGS``, the API has them all."""

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
