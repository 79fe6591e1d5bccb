"""The Message and UserAndAssMsg unions, exactly as the seed shows, and the one JSON door.

A callable discriminator computes ``role:msg_type``; a record without
``msg_type`` (or with a role that has no subclasses) takes the DEFAULT_TAG
branch and reads as BaseMessage. A user or assistant record whose msg_type is
unknown matches no tag, which is a validation error naming that tag: never a
silent fallback.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any, TypeAlias

from pydantic import BaseModel, Tag

from core.messages.assistant import AssistantMessage, AssistantTextMessage
from core.messages.base import BaseMessage
from core.messages.discriminator import DEFAULT_TAG, CompiledDiscriminator, tagged_members
from core.messages.door import MessageAdapter
from core.messages.trace import IntermediateTrace
from core.messages.user import (
    AttachmentMessage,
    AudioMessage,
    ContactMessage,
    HistoryMessage,
    ImageMessage,
    MultiPartMessage,
    TextMessage,
    UrlMessage,
    UserMessage,
    VideoMessage,
)


def get_discriminator_value(v: Any) -> str | None:
    """Compound discriminator ``role:msg_type``; DEFAULT_TAG when msg_type is absent (the seed's function).

    Accepts JSON objects and model instances alike, so validation and serialisation
    pick the same branch. Returns None (pydantic's "tag not found" error) for values
    that are neither.
    """
    if isinstance(v, dict):
        role = v.get("role")
        if "msg_type" not in v:
            return DEFAULT_TAG
        msg_type = v.get("msg_type")
    elif isinstance(v, BaseMessage):
        role = v.role
        if not hasattr(v, "msg_type"):
            return DEFAULT_TAG
        msg_type = v.msg_type
    else:
        return None
    return f"{role}:{msg_type}" if role in ("user", "assistant") else DEFAULT_TAG


_Subclass: TypeAlias = (
    Annotated[TextMessage, Tag("user:text")]
    | Annotated[ImageMessage, Tag("user:image")]
    | Annotated[AudioMessage, Tag("user:audio")]
    | Annotated[VideoMessage, Tag("user:video")]
    | Annotated[AttachmentMessage, Tag("user:attachment")]
    | Annotated[UrlMessage, Tag("user:url")]
    | Annotated[ContactMessage, Tag("user:contact")]
    | Annotated[HistoryMessage, Tag("user:history")]
    | Annotated[MultiPartMessage, Tag("user:multipart")]
    | Annotated[AssistantTextMessage, Tag("assistant:text")]
)
"""Every subclass with its tag: the one table both unions and MESSAGE_TAGS are made from.

Spelled out as a union (not built from a dict) so that the type checker sees the members.
"""

Message: TypeAlias = Annotated[
    _Subclass | Annotated[BaseMessage, Tag(DEFAULT_TAG)], CompiledDiscriminator(get_discriminator_value)
]
"""Any stored message; subclasses survive JSON because every container is typed with this."""

UserAndAssMsg: TypeAlias = Annotated[_Subclass, CompiledDiscriminator(get_discriminator_value)]
"""A user or assistant subclass only: no DEFAULT_TAG branch, so a bare record is an error here."""

MESSAGE_TAGS: dict[str, type[BaseMessage]] = dict(tagged_members(_Subclass))
"""Every subclass by its tag, read from the unions' table."""

# Forward references to Message are resolved once, here, now that the union exists.
_models: tuple[type[BaseModel], ...] = (
    BaseMessage,
    IntermediateTrace,
    UserMessage,
    AssistantMessage,
    *MESSAGE_TAGS.values(),
)
for _model in _models:
    # Inherited string annotations (BaseContent) are evaluated in the subclass's module, hence the merge.
    _namespace = {**vars(sys.modules[BaseMessage.__module__]), **vars(sys.modules[_model.__module__])}
    _model.model_rebuild(_types_namespace={**_namespace, "Message": Message})

MESSAGE_ADAPTER: MessageAdapter[Message] = MessageAdapter(Message)
"""The one door: parse a message from JSON (``validate_json``) and dump it (``dump_json``)."""

MESSAGES_ADAPTER: MessageAdapter[list[Message]] = MessageAdapter(list[Message])
"""The same door for a JSON array of messages."""
