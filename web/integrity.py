"""Type-loss detection for one record, as the timeline needs it (a stand-in for ``core.integrity``).

The lead is adding ``core/integrity.py`` with damage reports and repair inference;
until it lands, the timeline asks this module one question through one function,
:func:`inspect_record`, so swapping the implementation is a one-line change.

A damaged record is a bare BaseMessage with role user or assistant: what the pre-fix
``list[BaseMessage]`` annotation of TFROB-299 wrote. It reads fine, but the request
pipeline raises ``ContractError(role, msg_id)`` on it, and the fields of its subclass
are gone. The repair infers the subclass from the role and the shape of ``content``
and never invents the dropped data.
"""

from __future__ import annotations

from dataclasses import dataclass

from core import (
    AssistantTextMessage,
    BaseMessage,
    BaseUser,
    ContactMessage,
    ContractError,
    HistoryMessage,
    Message,
    MultiPartMessage,
    TextMessage,
)


@dataclass(frozen=True, slots=True)
class Damage:
    """What one damaged record lost, the error it causes, and the class a repair would give it."""

    role: str
    msg_id: str
    lost: tuple[str, ...]
    error_type: str
    error: str
    repair_class: str

    @property
    def summary(self) -> str:
        """One line for a tooltip or a log."""
        return f"type lost: {', '.join(self.lost)}; pipeline raises {self.error_type}; repair as {self.repair_class}"


def inspect_record(message: Message) -> Damage | None:
    """The damage of one record, or None when its type survived (or it never had a subclass)."""
    if type(message) is not BaseMessage or message.role not in ("user", "assistant"):
        return None
    repaired = infer_class(message)
    lost = tuple(name for name in repaired.model_fields if name not in BaseMessage.model_fields)
    error = ContractError(message.role, message.msg_id)
    return Damage(
        role=message.role,
        msg_id=message.msg_id,
        lost=lost,
        error_type=f"core.errors.{type(error).__name__}",
        error=str(error),
        repair_class=repaired.__name__,
    )


def infer_class(message: BaseMessage) -> type[BaseMessage]:
    """The subclass a damaged record most likely had, from its role and its content's shape."""
    if message.role == "assistant":
        return AssistantTextMessage
    content = message.content
    if isinstance(content, BaseUser):
        return ContactMessage
    if isinstance(content, list):
        if content and all(isinstance(item, BaseMessage) for item in content):
            return HistoryMessage
        return MultiPartMessage
    return TextMessage
