"""Small conversions from stored message pieces to the neutral LLM format.

Shared by BaseMessage (tool and console attachments) and the user subclasses,
so one MsgPart maps to one LLM part in exactly one place.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Iterable, Sequence
from typing import Any, assert_never

from core.llm.messages import (
    LLMAudioPart,
    LLMFilePart,
    LLMImagePart,
    LLMTextPart,
    LLMUserPart,
    LLMVideoPart,
)
from core.messages.objects import BaseUser
from core.messages.parts import AudioPart, FilePart, ImagePart, TextPart, VideoPart
from core.messages.refs import PathRef, UrlRef

_MEDIA_CLASSES: dict[str, type[LLMImagePart | LLMAudioPart | LLMVideoPart | LLMFilePart]] = {
    "image": LLMImagePart,
    "audio": LLMAudioPart,
    "video": LLMVideoPart,
    "file": LLMFilePart,
}


def part_to_llm(part: TextPart | ImagePart | AudioPart | VideoPart | FilePart) -> LLMUserPart:
    """One stored MsgPart as one neutral LLM part."""
    if isinstance(part, TextPart):
        return LLMTextPart(text=part.text)
    if isinstance(part, ImagePart | AudioPart | VideoPart):
        cls = _MEDIA_CLASSES[part.type]
        return cls(url=part.url, path=part.path, data=part.data, media_type=part.media_type, detail=part.detail)
    if isinstance(part, FilePart):
        return LLMFilePart(
            url=part.url,
            path=part.path,
            data=part.data,
            media_type=part.media_type or guess_media_type(part.filename or part.location),
            detail=part.detail,
            filename=part.filename or _basename(part.location),
        )
    assert_never(part)


def parts_to_llm(parts: Iterable[TextPart | ImagePart | AudioPart | VideoPart | FilePart]) -> tuple[LLMUserPart, ...]:
    """A list of stored parts as neutral LLM parts, in order."""
    return tuple(part_to_llm(p) for p in parts)


def location_to_part(kind: str, location: UrlRef | PathRef) -> LLMUserPart:
    """A whole-message medium (ImageMessage content and friends) as one neutral part."""
    cls = _MEDIA_CLASSES[kind]
    url = str(location) if isinstance(location, UrlRef) else None
    path = None if url is not None else str(location)
    media_type = _data_url_media_type(url) if url is not None and url[:5].lower() == "data:" else None
    filename = _basename(str(location)) if kind == "file" and media_type is None else None
    return cls(url=url, path=path, media_type=media_type or guess_media_type(str(location)), filename=filename)


def guess_media_type(name: str | None) -> str | None:
    """The media type a file name suggests, or None. Never looks at the file itself."""
    if not name or name[:5].lower() == "data:":
        return None
    clean = name.split("?", 1)[0].split("#", 1)[0]
    media_type, _ = mimetypes.guess_type(clean, strict=False)
    return media_type


def contact_text(user: BaseUser) -> str:
    """A contact card as one line of text."""
    return f"[contact card] {user.name} (uid {user.uid})" if user.name else f"[contact card] uid {user.uid}"


def text_of(content: Any) -> str:
    """The readable text of any ``content`` value (system prompts, tool results given as content)."""
    if isinstance(content, str):
        return content
    if isinstance(content, BaseUser):
        return contact_text(content)
    if isinstance(content, Sequence):
        return "\n".join(_item_text(item) for item in content)
    return str(content)


def _item_text(item: Any) -> str:
    if isinstance(item, TextPart):
        return item.text
    if isinstance(item, ImagePart | AudioPart | VideoPart | FilePart):
        return item.detail or f"[{item.type}: {item.location or 'inline data'}]"
    role = getattr(item, "role", None)
    if role is not None:
        return f"[{role}] {text_of(getattr(item, 'content', ''))}"
    return str(item)


def _basename(location: str | None) -> str | None:
    if not location or location[:5].lower() == "data:":
        return None
    clean = location.split("?", 1)[0].split("#", 1)[0].replace("\\", "/").rstrip("/")
    return clean.rsplit("/", 1)[-1] or None


def _data_url_media_type(url: str) -> str | None:
    header = url[5:].split(",", 1)[0]
    media_type = header.split(";", 1)[0].strip()
    return media_type or None
