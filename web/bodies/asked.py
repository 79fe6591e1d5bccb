"""What a body page was asked for and the links that change it: the request shown, the diff shown, a warning's card.

The payload and the diff pages, and the digests behind them, share these values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.providers import Degradation
from web import masking, urls
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
class DiffLinks:
    """The diff asked for (two providers, the cut, the repair): the URLs of its windows and of its listings."""

    conversation_id: str
    left: str
    right: str
    upto: str | None
    repair: bool

    @property
    def what(self) -> str:
        """The diff as a message names it."""
        return f"the {self.left} / {self.right} diff"

    def window_url(self, side: str, n: int) -> str:
        """Window ``n`` of one side's body."""
        return urls.diff_window(
            self.conversation_id, self.left, self.right, side, n, upto=self.upto, repair=self.repair
        )

    @property
    def diff_url(self) -> str:
        return urls.diff(self.conversation_id, self.left, self.right, upto=self.upto, repair=self.repair)

    def more_url(self, cause: str, offset: int) -> str:
        """The next changes of ``cause`` from ``offset``."""
        return urls.diff_changes(
            self.conversation_id, self.left, self.right, cause, offset, upto=self.upto, repair=self.repair
        )
