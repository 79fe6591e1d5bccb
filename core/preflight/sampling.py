"""The sampling rules every dialect shares: a temperature or top_p outside the provider's range, and more stop
sequences than it takes. The ranges and their source are each dialect's (``Dialect.sampling_ranges``);
``core.providers.sampling`` is the builder's side: it clamps and cuts with a warning naming the same rule ids."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from core.preflight.findings import Finding, Rule, pointer
from core.providers.sampling import STOP_COUNT_RULE, TEMPERATURE_RULE, TOP_P_RULE

if TYPE_CHECKING:
    from core.providers.base import Dialect

JSON = dict[str, Any]


def rules(dialect: Dialect) -> tuple[Rule, ...]:
    """The sampling rules of ``dialect``, each citing the source of its ranges (none for a dialect sending none)."""
    ranges = dialect.sampling_ranges
    if ranges is None:
        return ()
    found = [
        Rule(TEMPERATURE_RULE, "error", f"temperature outside 0-{ranges.temperature_max:g}", ranges.source),
        Rule(TOP_P_RULE, "error", f"top_p outside {ranges.top_p_min:g}-1", ranges.source),
    ]
    if ranges.max_stop is not None:
        found.append(Rule(STOP_COUNT_RULE, "error", f"more than {ranges.max_stop} stop sequences", ranges.source))
    return tuple(found)


def check(dialect: Dialect, body: JSON) -> Iterator[Finding]:
    """The sampling values of ``body`` outside the ranges of ``dialect``."""
    ranges = dialect.sampling_ranges
    if ranges is None:
        return
    node: Any = body
    for key in ranges.within:
        node = node.get(key) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return
    temperature, top_p, stop_count = _by_id(rules(dialect))
    bounds = (
        ("temperature", temperature, 0.0, ranges.temperature_max),
        (ranges.top_p_key, top_p, ranges.top_p_min, 1.0),
    )
    for key, rule, low, high in bounds:
        value = node.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and not low <= value <= high:
            yield rule.at(pointer(*ranges.within, key), f"{key} {value} outside {low:g}-{high:g}")
    stop = node.get(ranges.stop_key)
    taken = ranges.max_stop
    if stop_count is not None and taken is not None and isinstance(stop, list) and len(stop) > taken:
        detail = f"{len(stop)} stop sequences; the provider takes at most {taken}"
        yield stop_count.at(pointer(*ranges.within, ranges.stop_key), detail)


def _by_id(found: tuple[Rule, ...]) -> tuple[Rule, Rule, Rule | None]:
    """The temperature, top_p and stop-count rules of :func:`rules` (no stop rule where the count has no limit)."""
    by_id = {rule.id: rule for rule in found}
    return by_id[TEMPERATURE_RULE], by_id[TOP_P_RULE], by_id.get(STOP_COUNT_RULE)
