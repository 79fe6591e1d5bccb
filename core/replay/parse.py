"""Read a provider's answer back into the stored format: an AssistantTextMessage, its usage, why it stopped.

Each wire reads its own answer (``Wire.parse`` in its dialect module); this wraps it into the stored message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.messages.assistant import AssistantTextMessage
from core.providers.wire import Usage, Wire

__all__ = ["MalformedReply", "ParsedReply", "Usage", "parse_reply"]


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """The reply as a stored message, with usage and the provider's stop reason."""

    message: AssistantTextMessage
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None


class MalformedReply(ValueError):
    """The answer is JSON but not the shape the provider documents."""


def parse_reply(wire: Wire, data: Any, *, msg_id: str, conversation_id: str, create_ts: int) -> ParsedReply:
    """The assistant reply inside a provider response body, read by its wire; MalformedReply when it is not there."""
    if not isinstance(data, dict):
        raise MalformedReply("the answer is not a JSON object")
    try:
        fields, usage, finish = wire.parse(data)
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise MalformedReply(f"the answer lacks the expected fields ({type(exc).__name__}: {exc})") from None
    message = AssistantTextMessage(msg_id=msg_id, conversation_id=conversation_id, create_ts=create_ts, **fields)
    return ParsedReply(message=message, usage=usage, finish_reason=finish)
