"""Conversation and the contexts the prompt builder and chains pass around (the seed's risk table).

Every container here is typed with the Message union: each crosses JSON
somewhere (memory, snapshots) or may, and a bare ``list[BaseMessage]`` would
drop subclasses the first time it does.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.messages.union import Message


class Conversation(BaseModel):
    """The messages of one conversation, in order, as the prompt builder sees them."""

    model_config = ConfigDict(extra="allow")
    conversation_id: str = ""
    msgs: list[Message] = Field(default_factory=list)


class IntermediateTraceSnapshot(BaseModel):
    """A frozen copy of trace records, as prompt templates render them."""

    model_config = ConfigDict(extra="allow")
    records: tuple[Message, ...] = ()


class PromptContext(BaseModel):
    """What one request is built from: the conversation (traces expanded) and the current chain's records."""

    model_config = ConfigDict(extra="allow")
    conversation: Conversation = Field(default_factory=Conversation)
    intermediate_msgs: list[Message] | None = None
    variables: dict[str, Any] = Field(default_factory=dict)


class ChainContext(BaseModel):
    """What a chain collects while it thinks and acts, before it is appended to the trace."""

    model_config = ConfigDict(extra="allow")
    intermediate_msgs: list[Message] = Field(default_factory=list)
