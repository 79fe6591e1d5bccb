"""The reasoning effort an OpenAI-shaped body carries (Chat ``reasoning_effort``, Responses ``reasoning.effort``).

Whether the model reasons at all comes from its profile, then from the model table; which levels it takes comes
from the table (:mod:`core.models.reasoning`). A level the model refuses is moved to the nearest it takes, with a
warning naming the preflight rule that would otherwise report it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.models.reasoning import EFFORT_LEVEL_RULE, NO_REASONING_RULE, effort_levels, nearest_effort, reasons

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.providers.base import RequestContext, RequestOptions
    from core.providers.profiles import ModelProfile

# Reasoning switched on asks for the default effort (pydantic-ai OPENAI_REASONING_EFFORT_MAP: True -> medium).
REASONING_EFFORT_ON = "medium"


def reasoning_effort(
    options: RequestOptions, profile: ModelProfile, choice: FactsChoice, ctx: RequestContext
) -> str | None:
    """The reasoning effort to send for ``options`` (``effort``, else the ``thinking`` switch), or None.

    Only reasoning models take one (others answer 400 to it), and they never take sampling settings such
    as ``temperature``, which no OpenAI body here sends (pydantic-ai ``openai_unsupported_model_settings``).
    """
    thinking = options.thinking_asked
    if thinking is None:
        return None
    if not profile.reasoning_model:
        if thinking:
            reason = f"{profile.name} models take no reasoning parameters; thinking not sent"
            ctx.warn(None, "thinking", reason, NO_REASONING_RULE)
        return None
    if reasons(choice) is False and choice.facts is not None:
        if thinking:
            reason = f"{choice.facts.model} takes no reasoning parameters ({choice.facts.source}); thinking not sent"
            ctx.warn(None, "thinking", reason, NO_REASONING_RULE)
        return None
    effort = options.effort or (REASONING_EFFORT_ON if thinking else profile.effort_off)
    if not thinking and options.effort is None and not profile.thinking_off:
        reason = f"{profile.name} always reasons (it takes no effort 'none'); its lowest effort {effort!r} was sent"
        ctx.warn(None, "thinking", reason, EFFORT_LEVEL_RULE)
    levels = effort_levels(choice)
    if levels and effort not in levels:
        sent = nearest_effort(levels, effort)
        model = choice.facts.model if choice.facts else choice.model
        ctx.warn(
            None,
            "reasoning_effort",
            f"{model} does not take reasoning effort {effort!r} (it takes {', '.join(levels)}: {_source(choice)}); "
            f"sent {sent!r}",
            EFFORT_LEVEL_RULE,
        )
        return sent
    return effort


def _source(choice: FactsChoice) -> str:
    return choice.facts.source if choice.facts else "the model table"
