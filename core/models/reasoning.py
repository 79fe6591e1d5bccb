"""What the model table says about a model's reasoning: whether it reasons, and which effort levels it takes.

LiteLLM's map states reasoning with ``supports_reasoning`` and the levels beyond the common three with
``supports_<level>_reasoning_effort`` (``none``, ``minimal``, ``xhigh``, ``max``; ``low`` where a model refuses
it). The builders fit a requested effort to these levels and preflight checks a body against them, so both read
the one function here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.providers.base import Dialect

Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
"""A reasoning effort, as OpenAI spells it (``reasoning_effort``, Responses ``reasoning.effort``)."""

EFFORTS: tuple[Effort, ...] = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
"""Every effort, least reasoning first: ``--effort`` takes these, and the nearest accepted one stands in."""

# The preflight rules a refused effort breaks (core/preflight/openai.py holds them with their sources).
EFFORT_LEVEL_RULE = "reasoning-effort-level"
NO_REASONING_RULE = "reasoning-model-params"

# Every reasoning model takes these unless its entry says otherwise (LiteLLM: supports_low_reasoning_effort false).
COMMON_EFFORTS = frozenset({"low", "medium", "high"})


def reasons(choice: FactsChoice, silence_means_no: bool = True) -> bool | None:
    """Whether the model reasons, as the table says; None for a model it does not know.

    LiteLLM writes ``supports_reasoning`` only for models that reason, so silence is "no" unless the dialect
    says its slice of the map leaves the flag out of models that do (``silence_means_no`` False).
    """
    facts = choice.facts
    if facts is None or choice.match == "dialect":
        return None
    said = facts.says("reasoning")
    if said is None and not silence_means_no:
        return None
    return bool(said)


def effort_levels(choice: FactsChoice) -> tuple[Effort, ...] | None:
    """The efforts the model takes, least first; None when the table does not know the model or its reasoning.

    A common level (low, medium, high) is taken unless the entry refuses it; another only where the entry
    says the model takes it.
    """
    facts = choice.facts
    if facts is None or choice.match == "dialect" or facts.says("reasoning") is not True:
        return None
    levels: list[Effort] = []
    for level in EFFORTS:
        said = facts.says(f"{level}_reasoning_effort")
        if said is True or (said is None and level in COMMON_EFFORTS):
            levels.append(level)
    return tuple(levels)


def refused_effort(choice: FactsChoice, effort: str) -> bool | None:
    """Whether the table says the model refuses ``effort``: True when its entry says so, None when silent."""
    facts = choice.facts
    if facts is None or choice.match == "dialect":
        return None
    said = facts.says(f"{effort}_reasoning_effort")
    return None if said is None else not said


def nearest_effort(levels: tuple[Effort, ...], asked: str) -> Effort:
    """The accepted level nearest ``asked`` in :data:`EFFORTS` order (on a tie, the one with more reasoning)."""
    at = EFFORTS.index(asked) if asked in EFFORTS else EFFORTS.index("medium")
    return min(levels, key=lambda level: (abs(EFFORTS.index(level) - at), -EFFORTS.index(level)))


def effort_refusal(dialect: Dialect, model: str | None, effort: str) -> str | None:
    """Why ``model`` of ``dialect`` does not take ``effort`` as the table states it; None when it does or the table
    cannot say. ``none`` is always taken: it switches reasoning off, and each dialect settles that for its model."""
    from core.models.table import facts_for

    choice = facts_for(dialect, model)
    facts = choice.facts
    if effort == "none" or facts is None or choice.match == "dialect":
        return None
    if reasons(choice, dialect.reasoning_flag_complete) is False:
        return (
            f"{facts.model} does not reason ({facts.source}); --effort {effort} cannot be sent to it "
            f"(rule {NO_REASONING_RULE})"
        )
    levels = effort_levels(choice)
    if levels and effort not in levels:
        taken = levels if "none" in levels else ("none", *levels)
        said = f"{facts.model} takes --effort {', '.join(taken)}, not {effort!r}"
        return f"{said} ({facts.source}; rule {EFFORT_LEVEL_RULE})"
    return None
