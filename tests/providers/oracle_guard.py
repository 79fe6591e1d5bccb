"""What an oracle case saw: whether it built or checked a body, and the fixes (a build's warnings naming a rule) and
preflight errors it met. ``tests/providers/oracles/conftest.py`` fails a refusal case that met neither.

It watches the places every build, every check, every fix and every finding go through (a new ``RequestContext``;
``core.preflight.limits.check``, which ``check_body`` runs on every body; ``RequestContext.warn`` with a rule id;
``Rule.at``), so it holds whatever helper a case uses to build or check a body.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from core.preflight import limits
from core.preflight.catalogue import catalogue
from core.preflight.findings import Finding, Rule
from core.providers import dialect_names, provider_named
from core.providers.request import RequestContext

# Every rule id some dialect's catalogue holds: a fix must name one of them.
CATALOGUED = frozenset(rule.id for name in dialect_names() for rule in catalogue(provider_named(name)))


@dataclass(slots=True)
class Seen:
    """What one case did and met."""

    touched: bool = False
    fixes: set[str] = field(default_factory=set)
    errors: set[str] = field(default_factory=set)

    @property
    def handled(self) -> bool:
        """Whether a fix named a rule or preflight reported an error."""
        return bool(self.fixes or self.errors)

    @property
    def uncatalogued(self) -> set[str]:
        """The rules fixes named that no catalogue holds."""
        return self.fixes - CATALOGUED


@contextmanager
def watch(monkeypatch: pytest.MonkeyPatch) -> Iterator[Seen]:
    """Record what the code under ``monkeypatch``'s scope builds, checks, fixes and reports."""
    seen = Seen()
    init, warn, at, check = RequestContext.__init__, RequestContext.warn, Rule.at, limits.check

    def init_spy(self: RequestContext, *args: Any, **kwargs: Any) -> None:
        seen.touched = True
        init(self, *args, **kwargs)

    def warn_spy(self: RequestContext, msg_id: str | None, element: str, reason: str, rule: str | None = None) -> None:
        if rule is not None:
            seen.fixes.add(rule)
        warn(self, msg_id, element, reason, rule)

    def at_spy(self: Rule, pointer: str, detail: str = "") -> Finding:
        if self.severity == "error":
            seen.errors.add(self.id)
        return at(self, pointer, detail)

    def check_spy(*args: Any, **kwargs: Any) -> Any:
        seen.touched = True
        return check(*args, **kwargs)

    monkeypatch.setattr(RequestContext, "__init__", init_spy)
    monkeypatch.setattr(RequestContext, "warn", warn_spy)
    monkeypatch.setattr(Rule, "at", at_spy)
    monkeypatch.setattr(limits, "check", check_spy)
    yield seen
