"""The import page's contexts: the upload form and one result per uploaded file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from web import urls


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
    digest_due: Sequence[str] = ()
    """Conversations it changed that are large enough for their pages to be made ahead (``ImportSummary``)."""

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
