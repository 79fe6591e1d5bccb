"""Typed page contexts: each template reads one of these as ``page`` and nothing else from the request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from web.integrity import Damage
from web.listing import ListQuery
from web.source import ConversationSummary
from web.timeline import Page


@dataclass(frozen=True, slots=True)
class IndexPage:
    """``/``: the conversations matching the query, one keyset page at a time."""

    conversations: Sequence[ConversationSummary]
    query: ListQuery
    matched: int
    total: int
    next_url: str | None


@dataclass(frozen=True, slots=True)
class ConversationPage:
    """``/conversations/{id}``: the timeline, one page of cards at a time."""

    conversation_id: str
    title: str
    timeline: Page
    page_size: int
    damaged: int

    @property
    def next_url(self) -> str | None:
        if self.timeline.next_offset is None:
            return None
        return f"{self.base_url}?offset={self.timeline.next_offset}"

    @property
    def previous_url(self) -> str | None:
        if self.timeline.offset == 0:
            return None
        return f"{self.base_url}?offset={max(0, self.timeline.offset - self.page_size)}"

    @property
    def base_url(self) -> str:
        return f"/conversations/{quote(self.conversation_id, safe='')}"


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
