"""The public API of core.preflight is pinned: growing it is a visible decision."""

from __future__ import annotations

import core.preflight


def test_all_is_pinned() -> None:
    assert core.preflight.__all__ == [
        "BodyTypeError",
        "CapabilityReport",
        "Finding",
        "Preflight",
        "Rule",
        "Severity",
        "Uncarried",
        "cannot_carry",
        "capability_report",
        "check_body",
        "preflight",
        "validate_body",
    ]
