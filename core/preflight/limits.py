"""The output limit every dialect shares: a requested output length above what the model table says the model
writes (``core.models.limits.fit_to_model`` is the builder's side: it clamps with a warning)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from core.models.limits import MAX_OUTPUT_RULE
from core.models.table import facts_for
from core.preflight.findings import Finding, Rule, pointer

if TYPE_CHECKING:
    from core.providers.base import Dialect

JSON = dict[str, Any]

MAX_OUTPUT = Rule(
    MAX_OUTPUT_RULE,
    "error",
    "the requested output length is above the model's output limit",
    "Anthropic 400 'max_tokens: N > M, which is the maximum allowed number of output tokens for <model>'; OpenAI "
    "400 'max_tokens is too large: N. This model supports at most M completion tokens'; LiteLLM model map "
    "max_output_tokens",
)
RULES = (MAX_OUTPUT,)

# Where each dialect's body states its output length: Anthropic and Chat Completions, Chat Completions for
# reasoning models, Responses, Gemini.
LENGTH_PATHS: tuple[tuple[str, ...], ...] = (
    ("max_tokens",),
    ("max_completion_tokens",),
    ("max_output_tokens",),
    ("generationConfig", "maxOutputTokens"),
)


def check(dialect: Dialect, body: JSON, model: str | None) -> Iterator[Finding]:
    """The output lengths of ``body`` above the output limit of ``model`` (None: the body's own), when the model
    table knows the model (an unknown model's stand-in facts limit nothing)."""
    choice = facts_for(dialect, model or body.get("model"))
    facts = choice.facts
    limit = facts.max_output_tokens if facts is not None and choice.match != "dialect" else None
    if limit is None or facts is None:
        return
    for path in LENGTH_PATHS:
        node: Any = body
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, int) and not isinstance(node, bool) and node > limit:
            yield MAX_OUTPUT.at(pointer(*path), f"{node:,} > {limit:,}, the output limit of {facts.model!r}")
