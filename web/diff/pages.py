"""The diff page's context: two bodies side by side by windows, changes grouped by cause and listed by page."""

from __future__ import annotations

from dataclasses import dataclass

from web.bodies.asked import DiffLinks, RequestChoice
from web.bodies.compare import LISTED, Listing
from web.bodies.facts import BuildFacts
from web.bodies.windows import WindowedBody
from web.request_options import OptionsForm


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
    options: OptionsForm | None = None
    """The request options form: the fields asked, the recorded request's values, both models' limits."""

    @property
    def conversation_id(self) -> str:
        return self.request.conversation_id

    @property
    def damaged(self) -> BuildFacts | None:
        """The side whose request could not be built, if any."""
        return self.left if self.left.damaged else self.right if self.right.damaged else None
