"""Type-loss detection and repair: the TFROB-299 class of bug, found and explained.

A *damaged* record is a user or assistant record that is a bare BaseMessage: it
lost its subclass on a JSON round trip through a field annotated with the base
class, so ``msg_type`` and every subclass field were never written. Reading it
works (the DEFAULT_TAG branch); asking it for its LLM form raises the seed's
contract error. ``find_damage`` walks a message (trace records, nested
histories and their traces) and reports each such record; ``repair`` infers
the subclass from role and content shape and never invents dropped data.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from core.errors import ContractError
from core.messages.assistant import AssistantTextMessage
from core.messages.base import BaseMessage
from core.messages.refs import looks_like_url
from core.messages.union import MESSAGE_ADAPTER, MESSAGE_TAGS, Message
from core.messages.user import HistoryMessage, UserMessage

Confidence = Literal["certain", "guessed"]

# File endings that say which medium a path or URL is; anything else shared as a URL is a link.
_MEDIA_BY_EXTENSION: dict[str, str] = {
    **dict.fromkeys(("png", "jpg", "jpeg", "gif", "webp", "bmp", "svg", "heic", "tif", "tiff"), "image"),
    **dict.fromkeys(("mp3", "wav", "ogg", "oga", "m4a", "flac", "aac", "opus", "amr"), "audio"),
    **dict.fromkeys(("mp4", "mov", "webm", "mkv", "avi", "m4v"), "video"),
    **dict.fromkeys(
        ("pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "csv", "txt", "zip", "md", "json"), "attachment"
    ),
}


CONTRACT_ERROR_TYPE = f"{ContractError.__module__}.{ContractError.__qualname__}"
"""What the request pipeline raises on a damaged record (``core.errors.ContractError``)."""


@dataclass(frozen=True, slots=True)
class Damage:
    """One damaged record: where it is, what it lost, what the pipeline would raise, and what repair infers."""

    msg_id: str
    role: str
    path: str
    lost: tuple[str, ...]
    inferred: str
    confidence: Confidence
    reason: str

    @property
    def error_type(self) -> str:
        """The exception the request pipeline raises on this record, by its dotted name."""
        return CONTRACT_ERROR_TYPE

    @property
    def error(self) -> str:
        """The message of that exception, which names the record's role and id."""
        return str(ContractError(self.role, self.msg_id))

    def explain(self) -> str:
        """One line for a terminal or a tooltip."""
        return (
            f"{self.path} msg_id={self.msg_id}: {self.role} record lost its type "
            f"(lost: {', '.join(self.lost)}); the request pipeline raises: {self.error}; "
            f"repair: {self.inferred} ({self.confidence}: {self.reason})"
        )


def is_damaged(message: BaseMessage) -> bool:
    """True for a user or assistant record that is a bare BaseMessage."""
    return type(message) is BaseMessage and message.role in ("user", "assistant")


def walk(message: BaseMessage, path: str = "$") -> Iterator[tuple[str, BaseMessage]]:
    """Every message inside ``message`` (itself first) with its JSON path: trace records and nested histories."""
    yield path, message
    if isinstance(message, UserMessage):
        for i, record in enumerate(message.intermediate_trace.records):
            yield from walk(record, f"{path}.intermediate_trace.records[{i}]")
    content = message.content
    if isinstance(message, HistoryMessage) or (isinstance(content, list) and content and _is_message(content[0])):
        for i, nested in enumerate(content):
            if isinstance(nested, BaseMessage):
                yield from walk(nested, f"{path}.content[{i}]")


def find_damage(message: BaseMessage, path: str = "$") -> list[Damage]:
    """Every damaged record inside ``message``, in document order."""
    return [_describe(m, p) for p, m in walk(message, path) if is_damaged(m)]


def infer_class(role: str, content: Any) -> tuple[type[BaseMessage], Confidence, str]:
    """The subclass a damaged record most likely was, judged from its role and content shape only."""
    if role == "assistant":
        return AssistantTextMessage, "certain", "assistant messages have one subclass"
    if isinstance(content, dict) or (hasattr(content, "uid") and not isinstance(content, str)):
        return MESSAGE_TAGS["user:contact"], "certain", "content is a contact card"
    if isinstance(content, list):
        if content and _is_message(content[0]):
            return MESSAGE_TAGS["user:history"], "certain", "content is a list of messages"
        return MESSAGE_TAGS["user:multipart"], "certain", "content is a list of parts"
    text = str(content)
    medium, ending = _medium_of(text)
    if medium is not None:
        where = "URL" if looks_like_url(text) else "path"
        return MESSAGE_TAGS[f"user:{medium}"], "guessed", f"content is a {where} ending in {ending}"
    if looks_like_url(text) and not any(c.isspace() for c in text):
        return MESSAGE_TAGS["user:url"], "guessed", "content is a single URL"
    return MESSAGE_TAGS["user:text"], "certain" if text.strip() else "guessed", "content is text"


@dataclass(frozen=True, slots=True)
class Repaired:
    """A repaired message and the damage that was healed in it."""

    message: Message
    healed: tuple[Damage, ...]


def repair(message: BaseMessage) -> Repaired:
    """A copy of ``message`` with every damaged record re-typed; dropped fields stay absent (never invented)."""
    damage = find_damage(message)
    if not damage:
        return Repaired(message=MESSAGE_ADAPTER.validate_python(message), healed=())
    data = repair_json(MESSAGE_ADAPTER.dump_python(message, mode="json"), damage)
    return Repaired(message=MESSAGE_ADAPTER.validate_python(data), healed=tuple(damage))


def repair_json(data: dict[str, Any], damage: list[Damage]) -> dict[str, Any]:
    """A deep copy of a message's JSON with ``msg_type`` set on each damaged record; every other key verbatim.

    ``damage`` must come from ``find_damage`` on the same message with the root path ``$``.
    """
    fixed: dict[str, Any] = copy.deepcopy(data)
    for item in damage:
        _at(fixed, item.path)["msg_type"] = MESSAGE_TAGS_BY_CLASS[item.inferred].split(":", 1)[1]
    return fixed


MESSAGE_TAGS_BY_CLASS: dict[str, str] = {cls.__name__: tag for tag, cls in MESSAGE_TAGS.items()}


def _describe(message: BaseMessage, path: str) -> Damage:
    cls, confidence, reason = infer_class(message.role, message.content)
    extras = message.model_extra or {}
    subclass_fields = [name for name in cls.model_fields if name not in BaseMessage.model_fields]
    lost = tuple(
        f"{name} (not recoverable)" if name != "msg_type" else "msg_type"
        for name in subclass_fields
        if name not in extras
    )
    return Damage(
        msg_id=message.msg_id,
        role=message.role,
        path=path,
        lost=lost,
        inferred=cls.__name__,
        confidence=confidence,
        reason=reason,
    )


def _medium_of(text: str) -> tuple[str | None, str]:
    """The medium a path or URL names (by data-URL type or file ending) and the evidence, or (None, "")."""
    if text[:5].lower() == "data:":
        head = text[5:].split(";", 1)[0].split(",", 1)[0]
        medium = head.split("/", 1)[0]
        return (medium, head) if medium in ("image", "audio", "video") else (None, "")
    if not text or any(c.isspace() for c in text):
        return None, ""
    clean = text.split("?", 1)[0].split("#", 1)[0]
    tail = clean.replace("\\", "/").rsplit("/", 1)[-1]
    if "." not in tail:
        return None, ""
    ext = tail.rsplit(".", 1)[-1].lower()
    by_ext = _MEDIA_BY_EXTENSION.get(ext)
    return (by_ext, f".{ext}") if by_ext else (None, "")


def _is_message(value: Any) -> bool:
    return isinstance(value, BaseMessage) or (isinstance(value, dict) and "role" in value)


def _at(data: Any, path: str) -> dict[str, Any]:
    """The dict at a path produced by ``walk`` (only ``.key`` and ``[i]`` steps)."""
    node = data
    for step in _steps(path):
        node = node[step]
    assert isinstance(node, dict)
    return node


def _steps(path: str) -> Iterator[str | int]:
    for chunk in path[1:].replace("[", ".[").split("."):
        if not chunk:
            continue
        yield int(chunk[1:-1]) if chunk.startswith("[") else chunk
