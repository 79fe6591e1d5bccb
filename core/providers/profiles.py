"""Model profiles: the request-time rules that depend on the model, not only on the dialect.

The SDK types accept the same body for every model; the providers do not. A model's thinking and reasoning modes
come from the model table (``core.models``) where it knows the model: each dialect reads them from the table's
flags (``Dialect.table_profile``). Each dialect also has an ordered table of model-name patterns (first match wins,
in its dialect module), each entry a :class:`ModelProfile` that names its evidence: it gives what no dataset states
(Gemini's thinking shape, the tool-result media of Gemini 3) and stands in for a model the table does not know, with
a warning. ``profile_for(dialect, model)`` picks one; a model neither knows gets the conservative profile of its
dialect and a warning saying so. Patterns are searched, not anchored, so provider-prefixed ids
(``us.anthropic.claude-opus-4-7``, ``models/gemini-3-pro``) match too.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from core.providers.base import Dialect

ThinkingMode = Literal["none", "budget", "adaptive"]
"""Anthropic's ``thinking`` parameter: none (no extended thinking), ``enabled`` + ``budget_tokens``, or ``adaptive``."""
GeminiThinking = Literal["none", "budget", "level"]
"""Gemini's ``thinkingConfig``: none (no thinking model), ``thinkingBudget`` (2.5) or ``thinkingLevel`` (3)."""
ToolResultMedia = Literal["function_response_parts", "sibling_parts"]
"""Where Gemini takes a tool result's media: inside ``functionResponse.parts``, or as parts of a user content
after the responses (docs/providers.md: the response content holds only the responses, langchain#27799)."""


@dataclass(frozen=True, slots=True)
class ToolNameRule:
    """The names a provider accepts for tools; others are rewritten, the same way in every place they occur."""

    pattern: re.Pattern[str]
    max_length: int
    evidence: str

    def accepts(self, name: str) -> bool:
        """Whether ``name`` may be sent as it is."""
        return len(name) <= self.max_length and self.pattern.fullmatch(name) is not None

    def rewrite(self, name: str) -> str:
        """An accepted name for ``name``: rejected characters as ``_``, a leading ``_`` where a letter must
        come first, cut to fit, and a short digest of the original so two names do not become one."""
        if self.accepts(name):
            return name
        cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", name) or "_"
        if self.pattern.fullmatch(cleaned[:1] + "a") is None:
            cleaned = "_" + cleaned
        digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
        return f"{cleaned[: self.max_length - len(digest) - 1]}_{digest}"


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """What one family of models accepts, with the evidence for it.

    ``thinking_off`` is False where the model cannot stop reasoning (Gemini 2.5 Pro and 3 Pro, OpenAI
    o-series): "off" then asks for the least reasoning and says so. ``reasoning_model`` marks OpenAI
    reasoning models: ``reasoning_effort`` is sent, ``max_completion_tokens`` is the limit and sampling
    settings such as ``temperature`` are never sent. ``effort_off`` is the lowest effort the model takes.
    ``sampling`` is False where the model refuses temperature and top_p altogether.
    """

    name: str
    dialect: str
    evidence: str
    tool_names: ToolNameRule
    thinking: ThinkingMode = "none"
    gemini_thinking: GeminiThinking = "none"
    thinking_off: bool = True
    tool_result_media: ToolResultMedia = "sibling_parts"
    reasoning_model: bool = False
    effort_off: str = "low"
    sampling: bool = True


@dataclass(frozen=True, slots=True)
class ProfileChoice:
    """The profile chosen for a model, and the warning when the model was not recognised."""

    profile: ModelProfile
    model: str
    warning: str | None = None


@functools.lru_cache(maxsize=256)
def profile_for(dialect: Dialect, model: str | None) -> ProfileChoice:
    """The profile of ``model`` in ``dialect`` (None: the dialect's default model).

    The model table decides first (``Dialect.table_profile``: thinking and reasoning modes from its flags); the
    name patterns give what no dataset states and stand in for a model the table does not know, with a warning; a
    model neither knows gets the conservative profile of its dialect, with a warning naming it.
    """
    from core.models.table import facts_for

    if model is None:
        model = dialect.default_model
    named = _named(dialect, model)
    choice = facts_for(dialect, model)
    if choice.facts is not None and choice.match != "dialect":
        return ProfileChoice(dialect.table_profile(named or dialect.conservative, choice), model, choice.warning)
    if named is not None:
        warning = (
            f"model {model!r} is not in the model table; its reasoning follows the {named.name!r} profile of its "
            f"name ({named.evidence})"
        )
        return ProfileChoice(named, model, warning)
    conservative = dialect.conservative
    warning = (
        f"model {model!r} is not in the model table nor the {dialect.name} profiles; the conservative profile "
        f"{conservative.name!r} was used (it may not match what this model accepts)"
    )
    return ProfileChoice(conservative, model, warning)


def _named(dialect: Dialect, model: str) -> ModelProfile | None:
    """The profile of the first name pattern ``model`` matches, None when none does."""
    lowered = model.lower()
    for pattern, profile in dialect.profiles:
        if re.search(pattern, lowered):
            return profile
    return None
