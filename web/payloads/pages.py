"""The payload page's contexts: the request shown, its warnings, the body, the phases panel."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from web.bodies.asked import RequestChoice, WarningView
from web.bodies.builder import Built
from web.bodies.facts import BuildFacts
from web.bodies.recorded import RecordedPanel
from web.bodies.windows import WindowedBody
from web.conversation_page import ConversationPage
from web.request_options import OptionsForm


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
    options: OptionsForm | None = None
    """The request options form: the fields asked, the recorded request's values, the model's limit."""
    recorded: RecordedPanel | None = None
    """The request a provider log recorded for this step, compared with the built one (same provider only)."""
    recorded_provider: str | None = None
    """The provider of this step's recorded request, when the page shows another provider's body."""

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
