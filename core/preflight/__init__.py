"""Preflight: is a built body one the provider accepts for the chosen model? SDK types, then request-time rules.

The capability report says, for the same build, what of the conversation the provider cannot carry.
"""

from core.preflight.check import Preflight, check_body, preflight
from core.preflight.findings import Finding, Rule, Severity
from core.preflight.report import CapabilityReport, Uncarried, cannot_carry, capability_report
from core.preflight.sdk_types import BodyTypeError, validate_body

__all__ = [
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
