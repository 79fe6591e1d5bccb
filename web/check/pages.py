"""The check page's context: an uploaded file read with the CLI's rules, and what it holds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.integrity import Damage
from core.request_context.calls import UndefinedToolCall


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
    undefined_calls: Sequence[UndefinedToolCall] = ()
    """Recorded calls of a tool that is not among the tools stored for the call's turn."""
    max_bytes: int = 0
