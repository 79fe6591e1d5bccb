"""What a body page was asked for and the links that change it: the request shown, the diff shown, a warning's card.

The payload and the diff pages, and the digests behind them, share these values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.providers import Degradation
from web import masking, urls
from web.request_options import AskedOptions
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
    options: tuple[tuple[str, str], ...] = ()
    """The request options asked for, as their query (``web.request_options``): every link of the page keeps them."""

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
        return urls.with_query(
            urls.payload(
                self.conversation_id, provider or self.provider, upto=self.upto, repair=fix,
                model=self._model_for(provider),
            ),
            self.options,
        )  # fmt: skip

    def plain_url(self) -> str:
        """This page without request options (the recorded request's body)."""
        return urls.payload(self.conversation_id, self.provider, upto=self.upto, repair=self.repair, model=self.model)

    def kept_fields(self) -> tuple[tuple[str, str], ...]:
        """The request asked for as a GET form's hidden fields (the cut, the model, the repair switch)."""
        kept = (("upto", self.upto), ("model", self.model), ("repair", "1" if self.repair else None))
        return tuple((name, value) for name, value in kept if value)

    def payload_path(self) -> str:
        """The payload page's path without a query: the action of a GET form that carries its own fields."""
        return urls.payload(self.conversation_id, self.provider)

    def api_url(self, provider: str | None = None) -> str:
        return urls.with_query(self._api_url(provider), self.options)

    def _api_url(self, provider: str | None) -> str:
        return urls.api_payload(
            self.conversation_id,
            provider or self.provider,
            upto=self.upto,
            repair=self.repair,
            model=self._model_for(provider),
        )

    def window_url(self, n: int) -> str:
        return urls.with_query(
            urls.payload_window(
                self.conversation_id, self.provider, n, upto=self.upto, repair=self.repair, model=self.model
            ),
            self.options,
        )

    def windows_map_url(self) -> str:
        return urls.with_query(
            urls.payload_windows_map(
                self.conversation_id, self.provider, upto=self.upto, repair=self.repair, model=self.model
            ),
            self.options,
        )

    def download_url(self, provider: str | None = None) -> str:
        url = urls.payload_download(
            self.conversation_id,
            provider or self.provider,
            upto=self.upto,
            repair=self.repair,
            model=self._model_for(provider),
        )
        return urls.with_query(url, self.options)

    def phases_url(self) -> str:
        url = urls.phases(self.conversation_id, self.provider, upto=self.upto, repair=self.repair, model=self.model)
        return urls.with_query(url, self.options)

    def diff_url(self, left: str, right: str, *, repair: bool | None = None) -> str:
        fix = self.repair if repair is None else repair
        return urls.with_query(urls.diff(self.conversation_id, left, right, upto=self.upto, repair=fix), self.options)

    @property
    def diff_path(self) -> str:
        """The diff page's path without a query: the action of its GET form."""
        return urls.diff(self.conversation_id)

    def api_diff_url(self, left: str, right: str) -> str:
        url = urls.api_diff(self.conversation_id, left, right, upto=self.upto, repair=self.repair)
        return urls.with_query(url, self.options)


@dataclass(frozen=True, slots=True)
class DiffLinks:
    """The diff asked for (two providers, the cut, the repair): the URLs of its windows and of its listings."""

    conversation_id: str
    left: str
    right: str
    upto: str | None
    repair: bool
    options: AskedOptions = field(default_factory=AskedOptions)
    """The request options both bodies are built with (``web.request_options``)."""

    @property
    def what(self) -> str:
        """The diff as a message names it."""
        return f"the {self.left} / {self.right} diff"

    def window_url(self, side: str, n: int) -> str:
        """Window ``n`` of one side's body."""
        url = urls.diff_window(self.conversation_id, self.left, self.right, side, n, upto=self.upto, repair=self.repair)
        return urls.with_query(url, self.options.texts)

    @property
    def diff_url(self) -> str:
        url = urls.diff(self.conversation_id, self.left, self.right, upto=self.upto, repair=self.repair)
        return urls.with_query(url, self.options.texts)

    def kept_fields(self) -> tuple[tuple[str, str], ...]:
        """The diff asked for as a GET form's hidden fields (the two providers, the cut, the repair switch)."""
        kept = (
            ("left", self.left),
            ("right", self.right),
            ("upto", self.upto),
            ("repair", "1" if self.repair else None),
        )
        return tuple((name, value) for name, value in kept if value)

    @property
    def plain_url(self) -> str:
        """This diff without request options (the recorded request's bodies)."""
        return urls.diff(self.conversation_id, self.left, self.right, upto=self.upto, repair=self.repair)

    def more_url(self, cause: str, offset: int) -> str:
        """The next changes of ``cause`` from ``offset``."""
        url = urls.diff_changes(
            self.conversation_id, self.left, self.right, cause, offset, upto=self.upto, repair=self.repair
        )
        return urls.with_query(url, self.options.texts)
