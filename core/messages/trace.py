"""IntermediateTrace: the records of the reasoning that answered one user message.

``records`` is typed with the Message union, never ``list[BaseMessage]``: that
one annotation is the whole of TFROB-299.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from core.messages.union import Message


class IntermediateTrace(BaseModel):
    """The intermediate messages (assistant turns, tool and console results) of one user turn."""

    model_config = ConfigDict(extra="allow")
    records: list[Message] = Field(default_factory=list)
