"""The diff page's context: two bodies side by side, changes grouped by cause."""

from __future__ import annotations

from dataclasses import dataclass

from web.diff.view import Comparison
from web.payloads.builder import Built
from web.payloads.jsonview import Rendered
from web.payloads.pages import RequestChoice


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
