"""Type-loss of one record, as a card shows it: a thin view over ``core.integrity``.

The timeline asks one question through one function, :func:`inspect_record`. It
only adapts core's report to what a card needs (the error's type for the explanation,
and the card kind the repair implies), so detection and inference live in core alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from core import ContractError, Message
from core.integrity import find_damage, is_damaged


@dataclass(frozen=True, slots=True)
class Damage:
    """What one damaged record lost, the error it causes, and the class a repair would give it."""

    role: str
    msg_id: str
    lost: tuple[str, ...]
    error_type: str
    error: str
    repair_class: str
    confidence: str
    reason: str

    @property
    def summary(self) -> str:
        """One line for a tooltip or a log."""
        return f"type lost: {', '.join(self.lost)}; pipeline raises {self.error_type}; repair as {self.repair_class}"


ERROR_TYPE = f"{ContractError.__module__}.{ContractError.__qualname__}"
"""What the request pipeline raises on a damaged record (``core.errors.ContractError``)."""


def inspect_record(message: Message, path: str = "$") -> Damage | None:
    """The damage of this record itself (not of records inside it), or None when its type survived."""
    if not is_damaged(message):
        return None
    report = find_damage(message, path)[0]  # the record itself comes first, then anything nested in it
    return Damage(
        role=report.role,
        msg_id=report.msg_id,
        lost=report.lost,
        error_type=ERROR_TYPE,
        error=report.error,
        repair_class=report.inferred,
        confidence=report.confidence,
        reason=report.reason,
    )
