"""The provider-neutral LLM request format (the seed's ``llm_requests.py``).

``to_llm_request()`` turns stored messages into these; provider adapters turn
these into request bodies. They never cross JSON, so they are msgspec structs
(built in C, cheap on the hot path), not pydantic models, and untracked by the
cyclic collector (``gc=False``: they hold strings, tuples of each other and the
odd dict of provider extras, never a cycle). Not frozen; treat
them as values anyway: adapters derive changed copies with
``msgspec.structs.replace``. Every message keeps the ``msg_id`` it came from so
a payload part can be traced back to its card.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

import msgspec


class LLMTextPart(msgspec.Struct, gc=False):
    """Text in a user turn."""

    text: str
    kind: ClassVar[Literal["text"]] = "text"


class _LLMMediaPart(msgspec.Struct, gc=False):
    """Where a medium's bytes are (one of url, path, data) and the text to send when it cannot be sent."""

    url: str | None = None
    path: str | None = None
    data: str | None = None
    media_type: str | None = None
    detail: str | None = None
    filename: str | None = None

    @property
    def location(self) -> str | None:
        """The URL or path of the medium, or None when it is inline base64."""
        return self.url if self.url is not None else self.path


class LLMImagePart(_LLMMediaPart):
    """An image in a user turn."""

    kind: ClassVar[Literal["image"]] = "image"


class LLMAudioPart(_LLMMediaPart):
    """An audio clip in a user turn."""

    kind: ClassVar[Literal["audio"]] = "audio"


class LLMVideoPart(_LLMMediaPart):
    """A video in a user turn."""

    kind: ClassVar[Literal["video"]] = "video"


class LLMFilePart(_LLMMediaPart):
    """A file (PDF or other) in a user turn."""

    kind: ClassVar[Literal["file"]] = "file"


LLMMediaPart = LLMImagePart | LLMAudioPart | LLMVideoPart | LLMFilePart
LLMUserPart = LLMTextPart | LLMImagePart | LLMAudioPart | LLMVideoPart | LLMFilePart


class LLMThinking(msgspec.Struct, gc=False):
    """A signed thinking block, replayed verbatim to the provider that produced it."""

    thinking: str
    signature: str
    kind: ClassVar[Literal["thinking"]] = "thinking"


class LLMRedactedThinking(msgspec.Struct, gc=False):
    """An encrypted thinking block, replayed verbatim to the provider that produced it."""

    data: str
    kind: ClassVar[Literal["redacted_thinking"]] = "redacted_thinking"


LLMReasoningBlock = LLMThinking | LLMRedactedThinking

MADE_CALL_ID = "made_id"
"""``LLMToolCall.extra`` key set when the source gave the call no id and a reader made one in order: another
recording of the same call (the agent's next request) may carry an id of its own."""


class LLMToolCall(msgspec.Struct, gc=False):
    """A tool call; ``arguments`` is the model's original JSON text (byte-exact replay avoids drift).

    ``extra`` holds the provider fields the stored call carried beyond these three (e.g. the
    ``thought_signature`` Gemini returned with it); a dialect that knows one replays it, the others ignore it.
    """

    id: str
    name: str
    arguments: str
    extra: dict[str, Any] | None = None

    def parsed_arguments(self) -> dict[str, Any] | None:
        """The arguments as an object, or None when the text is not a JSON object."""
        return parse_arguments(self.arguments)


class LLMFunctionCall(msgspec.Struct, gc=False):
    """A legacy OpenAI function call."""

    name: str
    arguments: str


class LLMSystemMessage(msgspec.Struct, gc=False):
    """A system prompt fragment; adapters decide where it goes."""

    content: str
    msg_id: str | None = None
    role: ClassVar[Literal["system"]] = "system"


class LLMUserMessage(msgspec.Struct, gc=False):
    """A user turn. ``attachment_of`` is set when the turn only carries a tool/console result's attachments.

    It names the tool call id (or ``"console"``) so adapters can move the parts where their provider
    wants them: inside an Anthropic tool_result, after the whole tool block for OpenAI.
    """

    content: tuple[LLMUserPart, ...]
    msg_id: str | None = None
    attachment_of: str | None = None
    role: ClassVar[Literal["user"]] = "user"


class LLMAssistantMessage(msgspec.Struct, gc=False):
    """An assistant turn: text, reasoning, tool calls, a legacy function call and TFL scripts."""

    content: str = ""
    reasoning_content: str | tuple[LLMReasoningBlock, ...] | None = None
    tool_calls: tuple[LLMToolCall, ...] = ()
    function_call: LLMFunctionCall | None = None
    tfl_scripts: tuple[str, ...] = ()
    msg_id: str | None = None
    role: ClassVar[Literal["assistant"]] = "assistant"


class LLMToolMessage(msgspec.Struct, gc=False):
    """One tool result. ``tool_call_id`` is None for a bare string result that names no call."""

    content: str
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False
    msg_id: str | None = None
    role: ClassVar[Literal["tool"]] = "tool"


class LLMFunctionMessage(msgspec.Struct, gc=False):
    """The result of a legacy function call."""

    name: str
    content: str
    msg_id: str | None = None
    role: ClassVar[Literal["function"]] = "function"


class LLMTFLMessage(msgspec.Struct, gc=False):
    """Console output of the TFL interpreter; providers have no such role, so adapters rewrite it."""

    content: str
    summary: str | None = None
    meta: dict[str, Any] = msgspec.field(default_factory=dict)
    msg_id: str | None = None
    role: ClassVar[Literal["console"]] = "console"


LLMMessage = (
    LLMSystemMessage | LLMUserMessage | LLMAssistantMessage | LLMToolMessage | LLMFunctionMessage | LLMTFLMessage
)
"""Any neutral request message."""


def parse_arguments(text: str) -> dict[str, Any] | None:
    """Parse tool-call arguments; None when they are not a JSON object (the caller decides what that means)."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
