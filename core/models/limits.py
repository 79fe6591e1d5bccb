"""A request's options fitted to its model's limits, as the model table states them."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

MAX_OUTPUT_RULE = "max-output-tokens"  # the preflight rule of core/preflight/limits.py the clamp answers

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.providers.base import RequestOptions


def fit_to_model(options: RequestOptions, choice: FactsChoice) -> tuple[RequestOptions, list[str]]:
    """``options`` with ``max_tokens`` cut to the model's output limit, and a warning for each change.

    Only a model the table knows (its own entry, an alias or its family) is limited: an unknown model's
    stand-in facts say nothing about it, and the provider's own answer is then the better judge.
    """
    facts = choice.facts
    if facts is None or choice.match == "dialect":
        return options, []
    limit = facts.max_output_tokens
    if options.max_tokens is not None and limit is not None and options.max_tokens > limit:
        # Providers refuse the request rather than cut it: Anthropic 400 "max_tokens: N > M, which is the maximum
        # allowed number of output tokens for <model>"; OpenAI 400 "max_tokens is too large: N. This model
        # supports at most M completion tokens".
        warning = (
            f"max_tokens {options.max_tokens:,} is above the output limit of {facts.model!r} "
            f"({limit:,}, {facts.source}); sent as {limit:,}"
        )
        return replace(options, max_tokens=limit), [warning]
    return options, []
