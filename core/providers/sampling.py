"""Temperature, top_p and stop sequences within one provider's ranges: every change a warning naming the parameter
and the preflight rule it answers (``core/preflight/sampling.py`` holds the rules; each dialect its ranges).

Each dialect says its ranges (:class:`SamplingRanges`) and what its model refuses; :func:`sampling` applies them once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from core.providers.base import RequestContext

# The preflight rules (core/preflight/sampling.py) a clamp or a cut of this module answers.
TEMPERATURE_RULE = "temperature-range"
TOP_P_RULE = "top-p-range"
STOP_COUNT_RULE = "stop-sequences-count"


class SamplingRanges(NamedTuple):
    """What one provider takes of temperature, top_p and stop sequences, where its body holds them, and who says so.

    ``max_stop`` None: no documented limit on the number of stop sequences; ``within``: the object of the body that
    holds the three (Gemini's ``generationConfig``), empty for the top level.
    """

    temperature_max: float
    source: str
    top_p_min: float = 0.0
    max_stop: int | None = None
    within: tuple[str, ...] = ()
    top_p_key: str = "top_p"
    stop_key: str = "stop"


class Sampling(NamedTuple):
    """Temperature, top_p and stop sequences as one provider can take them."""

    temperature: float | None
    top_p: float | None
    stop: tuple[str, ...]

    def fields(self, ranges: SamplingRanges) -> dict[str, Any]:
        """The values to send, under the provider's names; a value not sent has no field."""
        out: dict[str, Any] = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.top_p is not None:
            out[ranges.top_p_key] = self.top_p
        if self.stop:
            out[ranges.stop_key] = list(self.stop)
        return out


def sampling(
    ctx: RequestContext,
    ranges: SamplingRanges,
    *,
    temperature_refused: str | None = None,
    top_p_refused: str | None = None,
    top_p_floor: tuple[float, str] | None = None,
    stop_refused: str | None = None,
    refused_rule: str | None = None,
) -> Sampling:
    """The request's sampling parameters within ``ranges``; every change is a warning naming the parameter and its rule.

    A ``*_refused`` reason drops that parameter (the model refuses it; ``refused_rule``: the preflight rule a refused
    temperature or top_p would break); ``top_p_floor`` (value, rule) raises a lower top_p where the request's other
    settings ask more than the range (Anthropic's thinking); more stop sequences than the provider takes keep the first.
    """
    options = ctx.options
    temperature, top_p, stop = options.temperature, options.top_p, options.stop
    if temperature is not None and temperature_refused is not None:
        ctx.warn(None, "temperature", f"temperature {temperature} not sent: {temperature_refused}", refused_rule)
        temperature = None
    if top_p is not None and top_p_refused is not None:
        ctx.warn(None, "top_p", f"top_p {top_p} not sent: {top_p_refused}", refused_rule)
        top_p = None
    temperature = _clamped(ctx, "temperature", temperature, (0.0, ranges.temperature_max), TEMPERATURE_RULE)
    top_p = _clamped(ctx, "top_p", top_p, (ranges.top_p_min, 1.0), TOP_P_RULE)
    if top_p_floor is not None:
        floor, rule = top_p_floor
        top_p = _clamped(ctx, "top_p", top_p, (floor, 1.0), rule)
    if stop and stop_refused is not None:
        ctx.warn(None, "stop", f"{len(stop)} stop sequence(s) not sent: {stop_refused}")
        stop = ()
    elif ranges.max_stop is not None and len(stop) > ranges.max_stop:
        taken = ranges.max_stop
        ctx.warn(None, "stop", f"{len(stop)} stop sequences; the provider takes {taken}, the first were sent",
                 STOP_COUNT_RULE)  # fmt: skip
        stop = stop[:taken]
    return Sampling(temperature, top_p, stop)


def _clamped(
    ctx: RequestContext, name: str, value: float | None, bounds: tuple[float, float], rule: str
) -> float | None:
    low, high = bounds
    if value is None or low <= value <= high:
        return value
    sent = min(max(value, low), high)
    ctx.warn(None, name, f"{name} {value} is outside this provider's range {low:g}-{high:g}; sent as {sent:g}", rule)
    return sent
