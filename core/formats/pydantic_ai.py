"""pydantic-ai's message history JSON (``ModelMessagesTypeAdapter.dump_json``) read into model calls.

The shapes are pydantic-ai's ``messages.py``: a ``ModelRequest`` (``"kind": "request"``) holds parts sent to the
model (``system-prompt``, ``user-prompt``, ``tool-return``, ``retry-prompt``) and the request's
``instructions``; a ``ModelResponse`` (``"kind": "response"``) holds what it answered (``text``, ``thinking``,
``tool-call``, and the provider-run ``builtin-tool-call``/``builtin-tool-return`` and ``file`` parts). Each
response is one call whose input is every message before it. A file holds one history (a JSON array of
messages), several (an array of arrays), or one history per line (JSONL).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

import orjson

from core.errors import InputError
from core.formats.events import Event, SourceRef, parse_time
from core.formats.span_fields import TextPool, arguments_text, content_text, request_of
from core.formats.transcript_calls import CallsOfTranscript, conversation_key
from core.llm import messages as llm
from core.providers.reading import kind_of, media_part

# pydantic-ai's multimodal user content (``ImageUrl``, ``BinaryContent``...), by its ``kind`` tag.
_URL_KINDS = {"image-url": "image", "audio-url": "audio", "video-url": "video", "document-url": "file"}
# What a response records beside its parts: kept aside, with no place in the stored format.
_RESPONSE_KEPT = ("usage", "provider_details", "provider_response_id", "finish_reason")


def looks_like_pydantic_ai(head: bytes) -> bool:
    """Whether a file's first bytes hold pydantic-ai messages: parts tagged with ``part_kind``."""
    return head.lstrip()[:1] == b"[" and b'"part_kind"' in head and b'"kind"' in head


def _user_part(item: Any, unplaced: list[Any]) -> llm.LLMUserPart | None:
    if isinstance(item, str):
        return llm.LLMTextPart(item)
    kind = item.get("kind") if isinstance(item, dict) else None
    if kind == "text-content" and isinstance(item.get("content"), str):
        return llm.LLMTextPart(item["content"])
    if kind in _URL_KINDS and isinstance(item.get("url"), str):
        modality = _URL_KINDS[kind]
        return media_part(modality, url=item["url"], media_type=item.get("media_type"))
    if kind == "binary" and isinstance(item.get("data"), str):
        mime = item.get("media_type")
        return media_part(kind_of(mime), data=item["data"], media_type=mime, filename=item.get("identifier"))
    unplaced.append(item)
    return None


def _request(message: dict[str, Any], pool: TextPool, unplaced: list[Any]) -> list[llm.LLMMessage]:
    out: list[llm.LLMMessage] = []
    for part in message.get("parts") or []:
        kind = part.get("part_kind") if isinstance(part, dict) else None
        if kind == "system-prompt":
            out.append(llm.LLMSystemMessage(pool(content_text(part.get("content")))))
        elif kind == "user-prompt":
            content = part.get("content")
            items = content if isinstance(content, list) else [content]
            parts = [p for p in (_user_part(i, unplaced) for i in items) if p is not None]
            if parts:
                out.append(llm.LLMUserMessage(tuple(parts)))
        elif kind == "tool-return":
            out.append(_tool_result(part, pool, is_error=False))
        elif kind == "retry-prompt":
            if part.get("tool_name"):
                out.append(_tool_result(part, pool, is_error=True))
            else:  # validation feedback on a text answer: pydantic-ai sends it as a user message
                out.append(llm.LLMUserMessage((llm.LLMTextPart(pool(content_text(part.get("content")))),)))
        else:
            unplaced.append(part)
    return out


def _tool_result(part: dict[str, Any], pool: TextPool, *, is_error: bool) -> llm.LLMToolMessage:
    call_id = part.get("tool_call_id")
    name = part.get("tool_name")
    return llm.LLMToolMessage(
        pool(content_text(part.get("content"))),
        str(call_id) if call_id else None,
        name if isinstance(name, str) else None,
        is_error,
    )


def _response(message: dict[str, Any], pool: TextPool, unplaced: list[Any]) -> llm.LLMAssistantMessage:
    texts: list[str] = []
    thoughts: list[dict[str, Any]] = []
    calls: list[llm.LLMToolCall] = []
    for part in message.get("parts") or []:
        kind = part.get("part_kind") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(content_text(part.get("content")))
        elif kind == "thinking":
            thoughts.append(part)
        elif kind == "tool-call":
            call_id = part.get("tool_call_id")
            calls.append(
                llm.LLMToolCall(str(call_id or ""), str(part.get("tool_name") or ""), arguments_text(part.get("args")))
            )
        else:  # builtin-tool-call/-return (run by the provider), file: no place in a stored turn
            unplaced.append(part)
    return llm.LLMAssistantMessage(pool("".join(texts)), _reasoning(thoughts, pool), tuple(calls))


def _reasoning(thoughts: list[dict[str, Any]], pool: TextPool) -> str | tuple[llm.LLMThinking, ...] | None:
    """Signed thinking as blocks a provider can replay; unsigned as text."""
    if not thoughts:
        return None
    if all(isinstance(t.get("signature"), str) and t["signature"] for t in thoughts):
        return tuple(llm.LLMThinking(pool(content_text(t.get("content"))), t["signature"]) for t in thoughts)
    return pool("\n".join(content_text(t.get("content")) for t in thoughts))


def _times(message: dict[str, Any]) -> list[Any]:
    return [message.get("timestamp"), *(p.get("timestamp") for p in message.get("parts") or [] if isinstance(p, dict))]


def history_events(messages: list[Any], path: str, line: int | None, pool: TextPool) -> Iterator[Event]:
    """The calls of one history: each response answers every message before it."""
    first = messages[0] if messages else None
    walk = CallsOfTranscript(conversation_key(_conversation_id(messages), first, "pydantic-ai"))
    instructions: str | None = None
    sent_at = None
    for index, message in enumerate(messages):
        where = f"[{index}]"
        if not isinstance(message, dict) or message.get("kind") not in ("request", "response"):
            raise InputError(
                "not a pydantic-ai message: expected a kind of request or response", source=path, line=line, path=where
            )
        unplaced: list[Any] = []
        times = [t for t in (parse_time(v) for v in _times(message)) if t is not None]
        if message["kind"] == "request":
            sent = _request(message, pool, unplaced)
            given = message.get("instructions")
            if isinstance(given, str) and given and given != instructions:
                instructions = given
                system = llm.LLMSystemMessage(pool(given))
                # Sent before the whole history on each call; placed where it first changed, never between a
                # tool call and its result.
                sent = [system, *sent] if not walk.history else [*sent, system]
            walk.send(sent)
            walk.keep(unplaced)
            sent_at = max(times) if times else sent_at
            continue
        answer = _response(message, pool, unplaced)
        extra = {k: message[k] for k in _RESPONSE_KEPT if message.get(k) not in (None, {}, [])}
        if unplaced:
            extra["parts"] = unplaced
        request = request_of(
            system=message.get("provider_name"), model=message.get("model_name"), tools=None, params={}, extra=extra
        )
        source = SourceRef(path, line, str(message.get("provider_response_id") or "") or f"messages{where}")
        ended = max(times) if times else None
        walk.answer((answer,), source, request=request, started_at=sent_at or ended, ended_at=ended, extra=extra)
    yield from walk.finish(SourceRef(path, line, f"messages[{len(messages) - 1}]"), sent_at)


def _conversation_id(messages: list[Any]) -> Any:
    for message in messages:
        if isinstance(message, dict) and message.get("conversation_id"):
            return message["conversation_id"]
    return None


def read_pydantic_ai(stream: IO[bytes], path: str) -> Iterator[Event]:
    """Every history of a pydantic-ai messages file (a history, a list of them, or JSONL of them)."""
    data = stream.read()
    pool = TextPool()
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        document = None
    if isinstance(document, list):
        histories = document if document and all(isinstance(h, list) for h in document) else [document]
        for history in histories:
            yield from history_events(history, path, None, pool)
        return
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            history = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"not JSON: {exc}", source=path, line=number) from None
        if not isinstance(history, list):
            raise InputError("expected a JSON array of pydantic-ai messages", source=path, line=number)
        yield from history_events(history, path, number, pool)
