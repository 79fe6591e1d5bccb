"""A cost cap kept call by call: each provider call holds its estimated cost before it is sent, then its real cost.

::

    held = budget.reserve(estimate)     # None: held, send; else what is spent or held already (do not send)
    budget.settle(estimate, actual)     # after the call: the hold becomes the real cost (kept when unknown)

A step replay's own ``--max-cost`` is a :class:`LocalBudget`; a suite run's is held in the store across
every item and process (``core.store.suite_items.SuiteBudget``). The estimate is ``core.replay.cost.estimate_call``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from core.messages.union import MESSAGE_ADAPTER, Message
from core.providers import Dialect
from core.replay.cost import ESTIMATE_METHOD, StepUsage, estimate_call, expected_output


class Budget(Protocol):
    """A cap in US dollars that calls hold part of before they are sent."""

    @property
    def cap(self) -> float:
        """The cap, in US dollars."""
        ...

    def reserve(self, usd: float) -> float | None:
        """Hold ``usd`` for a call about to be sent: None when held; else, held nothing, what is spent or held."""
        ...

    def settle(self, reserved: float, actual: float | None) -> None:
        """A call that held ``reserved`` ended: its real cost replaces the hold (None: unknown, the hold stays)."""
        ...


class LocalBudget:
    """A cap held in this process: one step replay's ``--max-cost``."""

    def __init__(self, cap: float) -> None:
        self._cap = cap
        self._spent = 0.0
        self._lock = threading.Lock()

    @property
    def cap(self) -> float:
        return self._cap

    def reserve(self, usd: float) -> float | None:
        with self._lock:
            if self._spent + usd > self._cap:
                return self._spent
            self._spent += usd
            return None

    def settle(self, reserved: float, actual: float | None) -> None:
        if actual is not None:
            with self._lock:
                self._spent += actual - reserved


@dataclass(frozen=True, slots=True)
class Hold:
    """A call's estimated cost: held in the budget, or not (``refusal`` says why; the call must not be sent)."""

    usd: float
    estimate: dict[str, Any]
    """The estimate as a step records it: method, tokens, cost."""
    refusal: str | None = None
    reason: Literal["max_cost", "price_unknown"] | None = None


def hold(
    budget: Budget,
    provider: Dialect,
    model: str,
    body: dict[str, Any],
    *,
    recorded: Message,
    previous: StepUsage | None = None,
    what: str,
) -> Hold:
    """Estimate the call that sends ``body`` in place of ``recorded`` and hold its cost; ``what`` names it."""
    expected = expected_output(MESSAGE_ADAPTER.dump_python(recorded, mode="json"))
    tokens_in, tokens_out, price = estimate_call(provider, model, body, expected_output=expected, previous=previous)
    estimate = {"method": ESTIMATE_METHOD, "input_tokens": tokens_in, "output_tokens": tokens_out,
                "cost_usd": price.usd}  # fmt: skip
    if price.usd is None:
        return Hold(0.0, estimate, f"{what} not sent: --max-cost cannot be kept ({price.note})", "price_unknown")
    spent = budget.reserve(price.usd)
    if spent is None:
        return Hold(price.usd, estimate)
    refusal = (
        f"{what} not sent: {spent:.6f} USD spent and its cost estimated at {price.usd:.6f} USD "
        f"({tokens_in}+{tokens_out} tokens; {ESTIMATE_METHOD}) would pass --max-cost {budget.cap}"
    )
    return Hold(price.usd, estimate, refusal, "max_cost")
