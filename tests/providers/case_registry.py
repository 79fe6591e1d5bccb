"""The payload cases' registry: ``@case`` and ``model_case`` register a history (and its options) by name;
``build`` makes a case's request in one dialect; ``golden_view`` is what its golden file holds.

The cases themselves are in ``tests.providers.cases`` (one per neutral element) and
``tests.providers.rule_cases`` (one per request-time rule); import ``CASES`` from ``cases``, which loads both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from core import (
    Message,
)
from core.providers import ChatLLM, RequestOptions, RequestResult, provider_named
from tests.providers.builders import BASE_OPTIONS

Case = tuple[list[Message], RequestOptions]
CASES: dict[str, Callable[[], Case]] = {}
# The model a case asks of a dialect, where a rule depends on the model (the other dialects use their default).
MODELS: dict[str, dict[str, str]] = {}


def case(fn: Callable[[], list[Message] | Case]) -> Callable[[], Case]:
    """Register a case under its function name."""

    def build() -> Case:
        out = fn()
        return out if isinstance(out, tuple) else (out, BASE_OPTIONS)

    CASES[fn.__name__] = build
    return build


def model_case(name: str, fn: Callable[[], list[Message] | Case], **models: str) -> None:
    """Register ``fn``'s history again as case ``name``, built for the given model of each named dialect."""
    CASES[name] = case(fn)
    del CASES[fn.__name__]
    MODELS[name] = {dialect.replace("_", "-"): model for dialect, model in models.items()}


def build(name: str, dialect: str) -> RequestResult:
    """The request for one case in one dialect."""
    messages, options = CASES[name]()
    model = MODELS.get(name, {}).get(dialect)
    if model is not None:
        options = replace(options, model=model)
    return ChatLLM(provider_named(dialect), options).construct_request_params(messages)


def golden_view(result: RequestResult) -> dict[str, Any]:
    """What a golden file holds: the body and the warnings (without the rule ids of fixes, which
    tests/preflight/test_catalogue.py pins, so that a golden file changes only when a body or a warning's words do)."""
    return {
        "body": result.body,
        "warnings": [{k: v for k, v in w.items() if k != "rule"} for w in result.warnings_json()],
    }
