"""Token usage of one step as each provider reports it, and what it cost from genai-prices' offline price table.

Input counts every prompt token, cached ones included (Anthropic reports the uncached part
alone, so its cache reads and writes are added back); ``cached`` is the part read from the
cache; ``output`` includes reasoning tokens (Gemini reports thoughts apart from the answer).
These are the sums genai-prices' own usage extractors make (``genai_prices/data.py``: Google's
``candidatesTokenCount`` and ``thoughtsTokenCount`` both go to ``output_tokens``).

A model the price table does not know has cost ``None`` with a note saying so: never a guess.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from core.errors import UnknownNameError
from core.jsonio import dumps
from core.providers import Dialect, provider_named
from core.providers.wire import StepUsage, Wire

__all__ = [
    "CHARS_PER_TOKEN",
    "ESTIMATE_METHOD",
    "Price",
    "StepUsage",
    "cost_of",
    "estimate_input",
    "run_cost",
    "usage_of",
]

CHARS_PER_TOKEN = 4
"""The body-size estimate: about four characters of JSON per token (OpenAI's rule of thumb for English)."""

ESTIMATE_METHOD = "request body size: UTF-8 bytes of the JSON body / 4"
"""How ``--max-cost`` estimates a step's input before sending it; said in every capped run."""


@dataclass(frozen=True, slots=True)
class Price:
    """A cost in US dollars, or None with the reason."""

    usd: float | None
    note: str | None = None


def usage_of(wire: Wire, response: Any) -> StepUsage:
    """The usage object of a provider's answer, read in its wire's terms."""
    if not isinstance(response, dict):
        return StepUsage()
    return wire.usage(response)


def cost_of(provider: Dialect, model: str, usage: StepUsage) -> Price:
    """What the usage cost at genai-prices' current rates; None with a note for an unknown model or no usage."""
    if usage.input is None and usage.output is None:
        return Price(None, "the provider reported no token usage")
    return _price(provider, model, usage.input or 0, usage.output or 0, usage.cached, usage.cache_write)


def run_cost(provider: str, model: str, response_body: dict[str, Any] | None) -> tuple[StepUsage, Price]:
    """A recorded reply run's usage and cost, read from its stored response (None with a note when unknown).

    Takes the provider's name as the run stored it: a run of a provider this build does not know has no cost.
    """
    try:
        known = provider_named(provider)
    except UnknownNameError:
        known = None
    if known is None or response_body is None:
        return StepUsage(), Price(None, "no provider answer to price")
    usage = usage_of(known.wire, response_body)
    return usage, cost_of(known, model, usage)


def estimate_input(provider: Dialect, model: str, body: dict[str, Any]) -> tuple[int, Price]:
    """The estimated input tokens of a body (see ESTIMATE_METHOD) and their cost."""
    tokens = math.ceil(len(dumps(body)) / CHARS_PER_TOKEN)
    return tokens, _price(provider, model, tokens, 0, None, None)


def _price(provider: Dialect, model: str, inp: int, out: int, cached: int | None, write: int | None) -> Price:
    from genai_prices import Usage, calc_price  # the price table loads on first use, not on import

    provider_id = provider.price_id
    if provider_id is None:
        return Price(None, f"no price table for provider {provider.name!r}")
    if not _priced(provider_id, model):
        return Price(None, f"genai-prices has no price for model {model!r} of {provider_id}")
    usage = Usage(input_tokens=inp, output_tokens=out, cache_read_tokens=cached, cache_write_tokens=write)
    total: Decimal = calc_price(usage, model_ref=model, provider_id=provider_id).total_price
    return Price(float(total))


@functools.lru_cache(maxsize=256)
def _priced(provider_id: str, model: str) -> bool:
    """Whether the price table knows the model. genai-prices remembers the models it found, not the ones it did not,
    and looking for an unknown one walks the provider's whole table: every reply of a suite run would."""
    from genai_prices import Usage, calc_price

    try:
        calc_price(Usage(input_tokens=0, output_tokens=0), model_ref=model, provider_id=provider_id)
    except LookupError:
        return False
    return True
