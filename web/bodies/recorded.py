"""The recorded request beside the built one: for a reply imported from a provider log, the body the provider
accepted and the body we build for the same step, compared as ``traceloupe import --verify`` compares them.

The import keeps the recorded body on the call's first reply (``core.formats.records.recorded_request``); the
comparison and the documented normalisations are ``core.formats.roundtrip``'s. Everything shown is masked
text: the template escapes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.formats.records import RecordedRequest, recorded_request
from core.formats.roundtrip import Difference, compare_bodies
from core.providers.registry import provider_named
from web import masking
from web.source import Loaded
from web.timeline.order import msg_anchor

MAX_BODY_CHARS = 200_000
"""Each body's pretty text is cut past this (a huge recorded history is read from its download instead)."""
MAX_VALUE_CHARS = 160


@dataclass(frozen=True, slots=True)
class DifferenceView:
    """One difference as the panel lists it: where, how, both values (short), and what explains it."""

    path: str
    kind: str
    recorded: str
    built: str
    normalisation: str | None
    """The documented normalisation's name; None: not one (a bug in our builder or reader)."""
    reason: str


@dataclass(frozen=True, slots=True)
class RecordedPanel:
    """The ``#recorded-request`` panel: the recorded body, the built one, and their differences."""

    provider: str
    model: str | None
    differences: tuple[DifferenceView, ...]
    recorded_text: str
    built_text: str
    truncated: bool

    @property
    def unexplained(self) -> int:
        """Differences no documented normalisation explains."""
        return sum(1 for d in self.differences if d.normalisation is None)


def _short(value: Any) -> str:
    text = masking.mask(json.dumps(value, ensure_ascii=False))  # as JSON: an empty string shows as ""
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


def _pretty(value: Any) -> tuple[str, bool]:
    text = masking.mask(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=repr))
    return (text[:MAX_BODY_CHARS], True) if len(text) > MAX_BODY_CHARS else (text, False)


def _view(difference: Difference) -> DifferenceView:
    rule = difference.normalisation
    return DifferenceView(
        path=masking.mask(difference.path or "/"),
        kind=difference.kind,
        recorded="" if difference.kind == "added" else _short(difference.recorded),
        built="" if difference.kind == "removed" else _short(difference.built),
        normalisation=rule.name if rule is not None else None,
        reason=rule.reason if rule is not None else "not a documented normalisation",
    )


def recorded_for(loaded: Loaded, upto: str | None) -> RecordedRequest | None:
    """The recorded request of the reply ``upto`` names (the step the page builds), or None."""
    if upto is None:
        return None
    position = loaded.timeline.position(msg_anchor(upto))
    if position is None:
        return None
    return recorded_request(loaded.timeline.message(position).additional_kwargs)


def recorded_panel(recorded: RecordedRequest, built_body: dict[str, Any]) -> RecordedPanel:
    """The panel comparing ``recorded`` with the body built for the same provider and step."""
    differences = compare_bodies(provider_named(recorded.provider), recorded.body, built_body)
    recorded_text, cut_recorded = _pretty(recorded.body)
    built_text, cut_built = _pretty(built_body)
    return RecordedPanel(
        provider=recorded.provider,
        model=recorded.model,
        differences=tuple(_view(d) for d in differences),
        recorded_text=recorded_text,
        built_text=built_text,
        truncated=cut_recorded or cut_built,
    )


@dataclass(frozen=True, slots=True)
class RecordedDifference:
    """One difference as the JSON API gives it: its JSON pointer, kind, both values whole, what explains it."""

    path: str
    kind: str
    recorded: Any
    built: Any
    normalisation: str | None
    """The documented normalisation's name; None: not one (a bug in our builder or reader)."""
    reason: str


@dataclass(frozen=True, slots=True)
class RecordedComparison:
    """The recorded request of the step a payload is built for, and its differences from the built body."""

    provider: str
    model: str | None
    body: dict[str, Any]
    differences: list[RecordedDifference]
    unexplained: int
    """Differences no documented normalisation explains."""


def recorded_comparison(recorded: RecordedRequest, built_body: dict[str, Any]) -> RecordedComparison:
    """What the payload API says of ``recorded`` beside the body built for the same provider and step (the panel's
    comparison, values whole: the API's response is masked as a whole)."""
    differences = [
        RecordedDifference(
            path=d.path or "/",
            kind=d.kind,
            recorded=None if d.kind == "added" else d.recorded,
            built=None if d.kind == "removed" else d.built,
            normalisation=d.normalisation.name if d.normalisation is not None else None,
            reason=d.normalisation.reason if d.normalisation is not None else "not a documented normalisation",
        )
        for d in compare_bodies(provider_named(recorded.provider), recorded.body, built_body)
    ]
    unexplained = sum(1 for d in differences if d.normalisation is None)
    return RecordedComparison(recorded.provider, recorded.model, recorded.body, differences, unexplained)
