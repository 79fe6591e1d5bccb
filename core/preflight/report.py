"""The capability report: what of a conversation one provider and model cannot carry, and the preflight verdict.

It is read from the build's own warnings (the adapters record everything they degrade, move or drop),
so there is no second rule set to keep in step with them: a warning about a medium, reasoning or a
tool result is something the provider did not receive as it was stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.preflight.catalogue import Fix, fixes
from core.preflight.check import Preflight, preflight
from core.providers.profiles import ModelProfile

if TYPE_CHECKING:
    from core.providers import Degradation, RequestResult

# Warning element -> the kind of content the report counts it under. Other elements (a placeholder turn,
# a renamed call id, arguments sent verbatim) change the shape, not the content, so they are not listed.
KIND_OF_ELEMENT = {
    "image": "image",
    "audio": "audio",
    "video": "video",
    "file": "file",
    "reasoning": "reasoning",
    "tool_result": "tool_result",
    "function_result": "function_result",
    "tools": "tools",
    "tool_choice": "tool_choice",
    "temperature": "parameters",
    "top_p": "parameters",
    "stop": "parameters",
}
# A media note that is not a loss: the bytes were sent under the type they really have.
CARRIED_NOTES = ("declared media type",)
MAX_REASONS = 3
INFERRED = "inferred_tool"  # the warning element of a tool inferred from the recorded calls


@dataclass(frozen=True, slots=True)
class Uncarried:
    """One kind of content the provider cannot take as stored: which messages hold it and what happens to it."""

    kind: str
    msg_ids: tuple[str, ...]
    what_happens: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "msg_ids": list(self.msg_ids), "what_happens": self.what_happens}


@dataclass(frozen=True, slots=True)
class CapabilityReport:
    """For one conversation and one provider plus model: what cannot be carried, and the preflight findings."""

    cannot_carry: tuple[Uncarried, ...]
    verdict: Preflight
    fixes: tuple[Fix, ...] = ()
    """The rules the builder answered by changing the body (each with its id, severity and source)."""

    @property
    def provider(self) -> str:
        return self.verdict.provider

    @property
    def model(self) -> str:
        return self.verdict.model

    @property
    def profile(self) -> str:
        """The profile the verdict was checked against."""
        return self.verdict.profile

    def to_json(self) -> dict[str, Any]:
        """The report as ``traceloupe payload --report --json`` prints it."""
        return {
            "provider": self.provider,
            "model": self.model,
            "profile": self.profile,
            "cannot_carry": [u.to_json() for u in self.cannot_carry],
            "fixes": [fix.to_json() for fix in self.fixes],
            "preflight": [
                {"rule": f.rule, "severity": f.severity, "authority": f.authority, "msg_id": f.msg_id}
                for f in self.verdict.findings
            ],
        }


def cannot_carry(warnings: list[Degradation]) -> tuple[Uncarried, ...]:
    """The build's losses counted by kind, in the order each kind first happened."""
    # Dicts as ordered sets: a long trace warns once a record, and a list's membership test would make it quadratic.
    ids: dict[str, dict[str, None]] = {}
    reasons: dict[str, dict[str, None]] = {}
    for warning in warnings:
        kind = KIND_OF_ELEMENT.get(warning.element)
        if kind is None or warning.reason.startswith(CARRIED_NOTES):
            continue
        held = ids.setdefault(kind, {})
        if warning.msg_id is not None:
            held[warning.msg_id] = None
        reasons.setdefault(kind, {})[warning.reason] = None
    return tuple(Uncarried(kind, tuple(ids[kind]), _summary(list(reasons[kind]))) for kind in ids)


def capability_report(result: RequestResult, profile: ModelProfile | None = None) -> CapabilityReport:
    """The report for a built request (its warnings and its preflight)."""
    verdict = preflight(result, profile)
    losses = cannot_carry(result.warnings)
    if result.tools_source == "inferred":
        ids = tuple(dict.fromkeys(w.msg_id for w in result.warnings if w.element == INFERRED and w.msg_id))
        names = ", ".join(tool.name for tool in result.tools)
        inferred = f"tools inferred from {result.inferred_calls} recorded calls: {names}"
        schema = next((u for u in losses if u.kind == "tools"), None)  # a provider's schema changes, if any
        if schema is not None:
            inferred = f"{inferred}; {schema.what_happens}"
        losses = (*(u for u in losses if u is not schema), Uncarried("tools", ids, inferred))
    return CapabilityReport(losses, verdict, fixes(result.provider, result.warnings))


def _summary(reasons: list[str]) -> str:
    shown = "; ".join(reasons[:MAX_REASONS])
    more = len(reasons) - MAX_REASONS
    return f"{shown}; and {more} more" if more > 0 else shown
