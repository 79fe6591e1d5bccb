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
    "estimate_call",
    "run_cost",
    "usage_of",
]

CHARS_PER_TOKEN = 4
"""The body-size estimate: about four characters of JSON per token (OpenAI's rule of thumb for English)."""

ESTIMATE_METHOD = (
    "input: request body size, UTF-8 bytes of the JSON body / 4 (at least the previous step's input); "
    "output: the request's own output limit, else the larger of the recorded reply's size / 4 and the "
    "previous step's output"
)
"""How ``--max-cost`` estimates a call before sending it; said in every capped run.

A request that sets its output limit (Anthropic always does) cannot cost more than its input and
that limit, so the cap is never passed by more than the input's misestimate. Without a limit the
output is a guess, so the cap may be passed by at most one call's output beyond the guess."""

OUTPUT_LIMIT_KEYS = ("max_tokens", "max_completion_tokens", "max_output_tokens")
"""Where a body sets its output limit: Chat Completions, Anthropic, OpenAI's reasoning models, Responses;
Gemini's is ``generationConfig.maxOutputTokens``."""


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


def output_limit(body: dict[str, Any]) -> int | None:
    """The most output tokens the body allows the provider to answer with, None when it sets no limit."""
    for key in OUTPUT_LIMIT_KEYS:
        if (found := _int(body.get(key))) is not None:
            return found
    config = body.get("generationConfig")
    return _int(config.get("maxOutputTokens")) if isinstance(config, dict) else None


def estimate_call(
    provider: Dialect,
    model: str,
    body: dict[str, Any],
    *,
    expected_output: int,
    previous: StepUsage | None = None,
) -> tuple[int, int, Price]:
    """A call's input and output tokens and their cost, estimated before sending it (see ESTIMATE_METHOD).

    ``expected_output``: the tokens the recorded reply took (its size / 4); ``previous``: the step before this
    one, whose body this one's holds in full.
    """
    tokens_in = math.ceil(len(dumps(body)) / CHARS_PER_TOKEN)
    limit = output_limit(body)
    tokens_out = limit if limit is not None else expected_output
    if previous is not None:
        tokens_in = max(tokens_in, previous.input or 0)
        tokens_out = tokens_out if limit is not None else max(tokens_out, previous.output or 0)
    return tokens_in, tokens_out, _price(provider, model, tokens_in, tokens_out, None, None)


def expected_output(recorded: Any) -> int:
    """The tokens a recorded reply (a JSON value) would take, by the body-size rule."""
    return math.ceil(len(dumps(recorded)) / CHARS_PER_TOKEN)


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


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
