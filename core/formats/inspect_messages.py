"""inspect_ai's chat messages read into neutral LLM messages.

The shapes are inspect_ai's ``ChatMessageSystem``/``User``/``Assistant``/``Tool`` (``model/_chat_message.py``):
``content`` is a string or a list of ``Content`` (``text``, ``reasoning``, ``image``, ``audio``, ``video``,
``document``, ``data``, and ``tool_use`` for a tool the provider ran); an assistant's ``tool_calls`` hold
``id``, ``function`` and ``arguments`` (an object); a tool message names its call with ``tool_call_id`` and
``function`` and an ``error`` when the tool failed. Media in a tool result follow it as the result's
attachments. What has no place (data parts, provider-run tools, unknown content) is collected in
``unplaced``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.formats.span_fields import TextPool, arguments_text, content_text
from core.llm import messages as llm
from core.providers.reading import kind_of, media_part

ATTACHMENT = "attachment://"
# Media content, by type: the field that holds the URL or data URL, and the medium it is.
_MEDIA_FIELDS = {"image": ("image", "image"), "audio": ("audio", "audio"), "video": ("video", "video")}


def resolve_attachments(value: Any, attachments: Mapping[str, Any]) -> Any:
    """``value`` with every ``attachment://<hash>`` string replaced by the attachment it names (left as it is
    when the log does not hold it)."""
    if isinstance(value, str):
        if value.startswith(ATTACHMENT):
            found = attachments.get(value[len(ATTACHMENT) :])
            return found if isinstance(found, str) else value
        return value
    if isinstance(value, list):
        return [resolve_attachments(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: v if k == "attachments" else resolve_attachments(v, attachments) for k, v in value.items()}
    return value


class InspectMessages:
    """Reads one log's messages, sharing the text the samples' transcripts and model events repeat."""

    def __init__(self) -> None:
        self.pool = TextPool()
        self.unplaced: list[Any] = []

    def _contents(self, content: Any) -> list[dict[str, Any]]:
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        return [c for c in content if isinstance(c, dict)] if isinstance(content, list) else []

    def _media(self, item: dict[str, Any]) -> llm.LLMUserPart | None:
        kind = item.get("type")
        if kind in _MEDIA_FIELDS:
            field, medium = _MEDIA_FIELDS[kind]
            where = item.get(field)
            if not isinstance(where, str):
                return None
            mime = f"{medium}/{item['format']}" if isinstance(item.get("format"), str) else None
            if where.startswith(("http://", "https://", "data:")):
                return media_part(medium, url=where, media_type=mime, detail=item.get("detail"))
            return media_part(medium, data=where, media_type=mime, detail=item.get("detail"))
        if kind == "document" and isinstance(item.get("document"), str):
            mime = item.get("mime_type")
            return media_part(kind_of(mime), url=item["document"], media_type=mime, filename=item.get("filename"))
        return None

    def _user_parts(self, content: Any) -> list[llm.LLMUserPart]:
        parts: list[llm.LLMUserPart] = []
        for item in self._contents(content):
            if item.get("type") == "text":
                parts.append(llm.LLMTextPart(self.pool(str(item.get("text") or ""))))
                continue
            media = self._media(item)
            if media is None:
                self.unplaced.append(item)
            else:
                parts.append(media)
        return parts

    def _text(self, content: Any) -> str:
        return self.pool("".join(str(c.get("text") or "") for c in self._contents(content) if c.get("type") == "text"))

    def _assistant(self, message: dict[str, Any]) -> llm.LLMAssistantMessage:
        texts: list[str] = []
        plain: list[str] = []
        signed: list[llm.LLMThinking] = []
        for item in self._contents(message.get("content")):
            kind = item.get("type")
            if kind == "text":
                texts.append(str(item.get("text") or ""))
            elif kind == "reasoning" and not item.get("redacted"):
                text = str(item.get("reasoning") or "")
                plain.append(text)
                if isinstance(item.get("signature"), str) and item["signature"]:
                    signed.append(llm.LLMThinking(self.pool(text), item["signature"]))
            else:  # redacted reasoning, a provider-run tool, data: no place in a stored turn
                self.unplaced.append(item)
        reasoning: str | tuple[llm.LLMThinking, ...] | None = None
        if signed and len(signed) == len(plain):
            reasoning = tuple(signed)
        elif plain:
            reasoning = self.pool("\n".join(plain))
        calls = tuple(
            llm.LLMToolCall(str(c.get("id") or ""), str(c.get("function") or ""), arguments_text(c.get("arguments")))
            for c in message.get("tool_calls") or []
            if isinstance(c, dict)
        )
        return llm.LLMAssistantMessage(self.pool("".join(texts)), reasoning, calls)

    def _tool(self, message: dict[str, Any]) -> list[llm.LLMMessage]:
        call_id = message.get("tool_call_id")
        error = message.get("error") if isinstance(message.get("error"), dict) else None
        text = self._text(message.get("content"))
        if error is not None and not text:
            text = self.pool(content_text(error.get("message")))
        name = message.get("function")
        result = llm.LLMToolMessage(
            text, str(call_id) if call_id else None, name if isinstance(name, str) else None, error is not None
        )
        media = [m for m in (self._media(c) for c in self._contents(message.get("content"))) if m is not None]
        if media and call_id:
            return [result, llm.LLMUserMessage(tuple(media), attachment_of=str(call_id))]
        return [result]

    def message(self, message: Any) -> list[llm.LLMMessage]:
        """One chat message as neutral messages (a tool result with images gives its attachments after it)."""
        if not isinstance(message, dict):
            self.unplaced.append(message)
            return []
        role = message.get("role")
        if role == "system":
            return [llm.LLMSystemMessage(self._text(message.get("content")))]
        if role == "assistant":
            return [self._assistant(message)]
        if role == "tool":
            return self._tool(message)
        parts = self._user_parts(message.get("content"))
        return [llm.LLMUserMessage(tuple(parts))] if parts else []

    def messages(self, items: Any) -> list[llm.LLMMessage]:
        """A list of chat messages as neutral messages."""
        out: list[llm.LLMMessage] = []
        for item in items if isinstance(items, list) else []:
            out.extend(self.message(item))
        return out
