"""The diff page's context: two bodies side by side by windows, changes grouped by cause and listed by page."""

from __future__ import annotations

from dataclasses import dataclass

from web import urls
from web.diff.view import LISTED, Listing
from web.payloads.facts import BuildFacts
from web.payloads.pages import RequestChoice
from web.payloads.windows import WindowedBody


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


@dataclass(frozen=True, slots=True)
class ChangesPage:
    """``/conversations/{id}/diff/changes``: more changes of one cause (a fragment, or a page without htmx)."""

    title: str
    links: DiffLinks
    listing: Listing


@dataclass(frozen=True, slots=True)
class DiffPage:
    """``/conversations/{id}/diff?left=P&right=Q``: two bodies side by side, changes grouped by cause."""

    title: str
    request: RequestChoice
    left: BuildFacts
    right: BuildFacts
    changes_total: int
    left_body: WindowedBody | None
    right_body: WindowedBody | None
    listings: list[Listing]
    """The first changes of each cause, in the groups' order."""
    links: DiffLinks
    max_listed: int = LISTED

    @property
    def conversation_id(self) -> str:
        return self.request.conversation_id

    @property
    def damaged(self) -> BuildFacts | None:
        """The side whose request could not be built, if any."""
        return self.left if self.left.damaged else self.right if self.right.damaged else None
