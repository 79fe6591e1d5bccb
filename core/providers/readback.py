"""What a dialect's reader gives back: a provider body read into the neutral form, and the documented ways a body
rebuilt from that read-back differs from the one recorded (the round trip's normalisations)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from core.llm.messages import LLMMessage
from core.providers.request import JSON, GenerationParams, ToolChoice, ToolSpec

DiffKind = Literal["added", "removed", "changed"]
"""How a built body differs from a recorded one at a path: a value only the built one has, only the recorded
one has, or a different value at both."""


@dataclass(frozen=True, slots=True)
class Normalisation:
    """A documented way a body rebuilt from its own read-back differs from the body recorded: not a bug.

    ``path`` is matched (fullmatch) against the JSON pointer of the difference; ``holds``, when given, must
    also accept the (recorded, built) values there (None for the side that has none) and the recorded body.
    ``drop``, when given, names list items of the recorded body the builder never sends (thought parts sent
    back): they are taken out before the bodies are compared, each a difference of this normalisation.
    """

    name: str
    reason: str
    path: re.Pattern[str]
    kinds: frozenset[DiffKind] = frozenset({"added", "removed", "changed"})
    holds: Callable[[Any, Any, JSON], bool] | None = None
    drop: Callable[[Any], bool] | None = None

    def covers(self, path: str, kind: DiffKind, recorded: Any, built: Any, body: JSON) -> bool:
        """Whether this normalisation explains the difference ``kind`` at ``path`` of recorded ``body``."""
        if kind not in self.kinds or not self.path.fullmatch(path):
            return False
        return self.holds is None or self.holds(recorded, built, body)


@dataclass(frozen=True, slots=True)
class ReadBody:
    """A provider body read back into the neutral form (a dialect's inverse of its builder).

    For a request: the messages sent and what the request carried besides them; for an answer: the assistant
    message(s) returned. ``extra`` keeps the top-level fields the neutral form has no place for (``stream``,
    ``metadata``, usage, a provider's built-in tools, ...) as recorded, so nothing is dropped silently.
    """

    messages: tuple[LLMMessage, ...]
    model: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    params: GenerationParams = field(default_factory=GenerationParams)
    extra: dict[str, Any] = field(default_factory=dict)
