"""Helper objects carried by messages: people, tool calls and results, console output, reasoning blocks."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from core.llm.messages import parse_arguments
from core.messages.parts import MsgPart

_OPEN = ConfigDict(extra="allow")


class BaseUser(BaseModel):
    """Who wrote a message, or the person on a contact card."""

    model_config = _OPEN
    uid: str
    name: str | None = None


class BaseGroup(BaseModel):
    """The chat group a message belongs to."""

    model_config = _OPEN
    gid: str
    name: str | None = None


class ToolCall(BaseModel):
    """One tool call the model made; ``arguments`` is the model's JSON text, kept even when invalid."""

    model_config = _OPEN
    id: str
    name: str
    arguments: str = ""

    def parsed_arguments(self) -> dict[str, Any] | None:
        """The arguments as an object, or None when the text is not a JSON object."""
        return parse_arguments(self.arguments)


class ToolReturn(BaseModel):
    """The result of one tool call, paired with it by ``call_id``."""

    model_config = _OPEN
    call_id: str
    name: str | None = None
    result: str = ""
    attachments: list[MsgPart] = Field(default_factory=list)
    is_error: bool = False


class ConsoleResult(BaseModel):
    """What the TFL (DSL) interpreter printed: a result, an optional summary, attachments and trace meta."""

    model_config = _OPEN
    result: str = ""
    summary_result: str | None = None
    attachments: list[MsgPart] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)


class FunctionCall(BaseModel):
    """A legacy OpenAI function call on an assistant message."""

    model_config = _OPEN
    name: str
    arguments: str = ""


class FunctionResult(BaseModel):
    """The result of a legacy function call (role ``function``)."""

    model_config = _OPEN
    name: str
    result: str = ""


class ThinkingBlock(BaseModel):
    """Anthropic-style signed reasoning; replayed verbatim, and only to the provider that signed it."""

    model_config = _OPEN
    type: Literal["thinking"] = "thinking"
    thinking: str = ""
    signature: str = ""


class RedactedThinkingBlock(BaseModel):
    """Anthropic-style encrypted reasoning the client cannot read, kept for replay."""

    model_config = _OPEN
    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str = ""


ReasoningBlock = Annotated[
    Annotated[ThinkingBlock, Tag("thinking")] | Annotated[RedactedThinkingBlock, Tag("redacted_thinking")],
    Discriminator("type"),  # a key, not a function: see MsgPart
]
"""One reasoning block, dispatched on its ``type``."""
