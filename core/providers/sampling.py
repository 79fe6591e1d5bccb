"""Temperature, top_p and stop sequences within one provider's ranges: every change a warning naming the parameter.

Each dialect says its ranges and what its model refuses; :func:`sampling` applies them once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from core.providers.base import RequestContext


class Sampling(NamedTuple):
    """Temperature, top_p and stop sequences as one provider can take them."""

    temperature: float | None
    top_p: float | None
    stop: tuple[str, ...]

    def fields(self, *, top_p: str = "top_p", stop: str = "stop") -> dict[str, Any]:
        """The values to send, under the provider's names; a value not sent has no field."""
        out: dict[str, Any] = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.top_p is not None:
            out[top_p] = self.top_p
        if self.stop:
            out[stop] = list(self.stop)
        return out


def sampling(
    ctx: RequestContext,
    *,
    temperature_max: float,
    temperature_refused: str | None = None,
    top_p_refused: str | None = None,
    top_p_min: float = 0.0,
    max_stop: int | None = None,
    stop_refused: str | None = None,
    refused_rule: str | None = None,
) -> Sampling:
    """The request's sampling parameters within a provider's ranges; every change is a warning naming the parameter.

    A ``*_refused`` reason drops that parameter (the model refuses it; ``refused_rule``: the preflight rule a refused
    temperature or top_p would break); ``top_p_min`` raises a lower top_p; ``max_stop`` keeps the first stop sequences.
    """
    options = ctx.options
    temperature, top_p, stop = options.temperature, options.top_p, options.stop
    if temperature is not None and temperature_refused is not None:
        ctx.warn(None, "temperature", f"temperature {temperature} not sent: {temperature_refused}", refused_rule)
        temperature = None
    if top_p is not None and top_p_refused is not None:
        ctx.warn(None, "top_p", f"top_p {top_p} not sent: {top_p_refused}", refused_rule)
        top_p = None
    temperature = _clamped(ctx, "temperature", temperature, 0.0, temperature_max)
    top_p = _clamped(ctx, "top_p", top_p, top_p_min, 1.0)
    if stop and stop_refused is not None:
        ctx.warn(None, "stop", f"{len(stop)} stop sequence(s) not sent: {stop_refused}")
        stop = ()
    elif max_stop is not None and len(stop) > max_stop:
        ctx.warn(None, "stop", f"{len(stop)} stop sequences; the provider takes {max_stop}, the first were sent")
        stop = stop[:max_stop]
    return Sampling(temperature, top_p, stop)


def _clamped(ctx: RequestContext, name: str, value: float | None, low: float, high: float) -> float | None:
    if value is None or low <= value <= high:
        return value
    sent = min(max(value, low), high)
    ctx.warn(None, name, f"{name} {value} is outside this provider's range {low:g}-{high:g}; sent as {sent:g}")
    return sent
