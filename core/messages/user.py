"""The nine user message classes (the seed's UserMessage family).

Each narrows ``content`` and implements ``to_llm_request``; each carries the
``intermediate_trace`` of the reasoning that answered it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from core.errors import ContractError
from core.llm.messages import LLMTextPart, LLMUserMessage, LLMUserPart
from core.messages.base import BaseMessage
from core.messages.convert import contact_text, location_to_part, parts_to_llm, text_of
from core.messages.objects import BaseUser
from core.messages.parts import MsgPart
from core.messages.refs import LocationField, UrlRef
from core.messages.trace import IntermediateTrace

if TYPE_CHECKING:
    from core.messages.union import Message

UserMessageType = Literal["text", "image", "audio", "video", "attachment", "url", "contact", "history", "multipart"]


class UserMessage(BaseMessage):
    """What every user message shares: the role, its msg_type tag and its intermediate trace."""

    role: Literal["user"] = "user"
    msg_type: UserMessageType
    intermediate_trace: IntermediateTrace = Field(default_factory=IntermediateTrace)

    def to_llm_request(self) -> LLMUserMessage:
        """This user turn in the neutral format; the trace is placed by the prompt builder, not here."""
        return LLMUserMessage(content=self.llm_parts(), msg_id=self.msg_id)

    def llm_parts(self) -> tuple[LLMUserPart, ...]:
        """The neutral parts of this message's content."""
        raise NotImplementedError


class TextMessage(UserMessage):
    """Plain text from the user."""

    msg_type: Literal["text"] = "text"
    content: str = ""

    def llm_parts(self) -> tuple[LLMUserPart, ...]:
        return (LLMTextPart(text=self.content),)


_PART_KINDS = {"image": "image", "audio": "audio", "video": "video", "attachment": "file"}
"""The neutral part a message of one file becomes, by its msg_type: an attachment goes as a file part."""


class _LocatedMessage(UserMessage):
    """A user message whose content is one file, by path or URL."""

    content: LocationField

    def llm_parts(self) -> tuple[LLMUserPart, ...]:
        return (location_to_part(_PART_KINDS[self.msg_type], self.content),)


class ImageMessage(_LocatedMessage):
    """An image, by path or URL."""

    msg_type: Literal["image"] = "image"


class AudioMessage(_LocatedMessage):
    """An audio clip (a voice note), by path or URL."""

    msg_type: Literal["audio"] = "audio"


class VideoMessage(_LocatedMessage):
    """A video, by path or URL."""

    msg_type: Literal["video"] = "video"


class AttachmentMessage(_LocatedMessage):
    """Any file (a PDF, a spreadsheet), by path or URL."""

    msg_type: Literal["attachment"] = "attachment"


class UrlMessage(UserMessage):
    """A link the user shared; the model gets the link as text (the server never fetches it)."""

    msg_type: Literal["url"] = "url"
    content: UrlRef

    def llm_parts(self) -> tuple[LLMUserPart, ...]:
        return (LLMTextPart(text=str(self.content)),)


class ContactMessage(UserMessage):
    """A contact card."""

    msg_type: Literal["contact"] = "contact"
    content: BaseUser

    def llm_parts(self) -> tuple[LLMUserPart, ...]:
        return (LLMTextPart(text=contact_text(self.content)),)


class HistoryMessage(UserMessage):
    """A forwarded chat history: each element is itself any message, nested histories included."""

    msg_type: Literal["history"] = "history"
    content: list[Message] = Field(default_factory=list)

    def llm_parts(self) -> tuple[LLMUserPart, ...]:
        """The history as one transcript: a header, then each message's speaker and parts.

        The nested messages' own traces are another conversation's internals and stay out.
        A damaged nested user/assistant record raises the contract error like a top-level one.
        """
        parts: list[LLMUserPart] = [LLMTextPart(text=f"[forwarded chat history: {len(self.content)} messages]")]
        for msg in self.content:
            speaker = msg.creator.name if msg.creator is not None and msg.creator.name else msg.role
            if isinstance(msg, UserMessage):
                parts.append(LLMTextPart(text=f"{speaker}:"))
                parts.extend(msg.llm_parts())
            elif msg.role in ("user", "assistant") and type(msg) is BaseMessage:
                raise ContractError(msg.role, msg.msg_id)
            else:
                parts.append(LLMTextPart(text=f"{speaker}: {text_of(msg.content)}"))
        return tuple(parts)


class MultiPartMessage(UserMessage):
    """Several parts (text and media) in one turn."""

    msg_type: Literal["multipart"] = "multipart"
    content: list[MsgPart] = Field(default_factory=list)

    def llm_parts(self) -> tuple[LLMUserPart, ...]:
        return parts_to_llm(self.content)


USER_MESSAGE_CLASSES: tuple[type[UserMessage], ...] = (
    TextMessage,
    ImageMessage,
    AudioMessage,
    VideoMessage,
    AttachmentMessage,
    UrlMessage,
    ContactMessage,
    HistoryMessage,
    MultiPartMessage,
)
