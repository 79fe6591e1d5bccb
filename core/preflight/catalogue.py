"""The rule catalogue: every request-time rule a provider's bodies are checked against, each with its id,
severity and source, and the fixes a build applied, named by the same ids.

A builder that makes a body valid (clamps, drops, folds, switches thinking off) records a warning carrying the id
of the preflight rule the body would otherwise break (:attr:`core.providers.Degradation.rule`), so one catalogue
answers both "what would the provider refuse" and "what did the builder change, and on whose word".
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.preflight import limits, media, sampling, strict_json, tools
from core.preflight.check import SDK_RULE
from core.preflight.findings import Rule

UNCATALOGUED = "not in the catalogue"
"""The source a fix names when its rule id is in no catalogue."""

if TYPE_CHECKING:
    from core.providers import Degradation, Dialect


def catalogue(dialect: Dialect) -> tuple[Rule, ...]:
    """The rules of ``dialect``: its own module's, the tool, media, output-limit, sampling and strict-JSON rules every
    dialect shares, and the SDK types."""
    own: tuple[Rule, ...] = importlib.import_module(dialect.rules_module).RULES if dialect.rules_module else ()
    sdk = Rule(SDK_RULE, "error", "the SDK request types reject the body", f"{dialect.sdk_types} request types")
    found: dict[tuple[str, str], Rule] = {}
    shared = (*tools.RULES, *media.RULES, *limits.RULES, *sampling.rules(dialect), *strict_json.RULES)
    for rule in (*own, *shared, sdk):
        found.setdefault((rule.id, rule.authority), rule)
    return tuple(found.values())


@dataclass(frozen=True, slots=True)
class Fix:
    """A change the builder made so the provider takes the body: the rule it answers and what was done."""

    rule: Rule
    done: str
    msg_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The fix as ``payload --report --json`` prints it."""
        rule = self.rule
        return {"rule": rule.id, "severity": rule.severity, "source": rule.authority, "fix": self.done,
                "msg_id": self.msg_id}  # fmt: skip

    def __str__(self) -> str:
        where = f" at {self.msg_id}" if self.msg_id else ""
        return f"fixed: {self.rule.id}{where}: {self.done} ({self.rule.authority})"


def fixes(dialect: Dialect, warnings: list[Degradation]) -> tuple[Fix, ...]:
    """The warnings of a build that are fixes, each with its rule from the catalogue (an error of no known source
    where the catalogue lacks it)."""
    rules = {rule.id: rule for rule in reversed(catalogue(dialect))}
    out: list[Fix] = []
    for warning in warnings:
        if warning.rule is None:
            continue
        rule = rules.get(warning.rule) or Rule(warning.rule, "error", warning.reason, UNCATALOGUED)
        out.append(Fix(rule, warning.reason, warning.msg_id))
    return tuple(out)
