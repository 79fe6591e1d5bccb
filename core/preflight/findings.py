"""What preflight reports: rules with their authority, and findings that name the rule and the node it broke.

A rule is written once, with its id, its severity and the evidence that the provider enforces it
(an error string from the provider's docs, SDK or a public issue). ``error`` means the provider answers
400 to such a body; ``warning`` means some backends of the dialect reject it, or the provider changes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One request-time rule of a provider: its id, how bad breaking it is, and who says so."""

    id: str
    severity: Severity
    summary: str
    authority: str

    def at(self, pointer: str, detail: str = "") -> Finding:
        """A finding of this rule at the body node ``pointer`` (RFC 6901)."""
        return Finding(self.id, self.severity, self.authority, pointer, detail or self.summary)


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule a built body breaks, where (a JSON pointer into the body) and, when known, which message it came from."""

    rule: str
    severity: Severity
    authority: str
    pointer: str
    detail: str
    msg_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The finding as the CLI's and the API's JSON prints it."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "authority": self.authority,
            "msg_id": self.msg_id,
            "pointer": self.pointer,
            "detail": self.detail,
        }

    def __str__(self) -> str:
        where = self.msg_id or self.pointer or "body"
        return f"{self.severity}: {self.rule} at {where}: {self.detail} ({self.authority})"


def pointer(*parts: str | int) -> str:
    """The RFC 6901 JSON pointer of a path of keys and indexes."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)
