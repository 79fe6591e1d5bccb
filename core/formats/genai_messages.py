"""The message shapes OpenTelemetry GenAI instrumentations write, read into neutral LLM messages.

Two generations of one idea: the current JSON messages (``{"role", "parts": [{"type": "text" | "tool_call" |
"tool_call_response" | "reasoning" | "blob" | "uri" | ...}]}``,
https://github.com/open-telemetry/semantic-conventions/blob/main/docs/gen-ai/gen-ai-input-messages.json), and
the older chat-completions-like ``{"role", "content", "tool_calls", "tool_call_id"}`` that the indexed
``gen_ai.prompt.N.*`` attributes and the ``gen_ai.*.message`` events carry. Tool results sent in a user
message (Anthropic, Gemini, pydantic-ai) are classified by part type, never read as a user turn.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

import orjson

from core.formats.span_fields import TextPool, arguments_text, content_text, loads
from core.llm import messages as llm
from core.providers.reading import kind_of, media_part

_ASSISTANT_ROLES = ("assistant", "model", "ai")
_TOOL_RESULT_PARTS = ("tool_call_response", "tool_result", "function_response")
_TOOL_CALL_PARTS = ("tool_call", "tool_use", "function_call")


MEMO_ENTRIES = 5_000
"""Messages a reader remembers by their source at most (then it starts again), about those of the conversations
being read: a resent history's earlier messages are read once, not once per call that resends them."""


HISTORY_CHARS = 4 << 20
"""Characters of the histories a reader keeps to recognise their continuations (then it starts again)."""


@dataclass(frozen=True, slots=True)
class _History:
    """A JSON array of messages as read: its text without the closing bracket, its messages, what they left
    unplaced."""

    opening: str
    messages: tuple[llm.LLMMessage, ...]
    unplaced: tuple[Any, ...]


def _continued(text: str, history: _History) -> list[Any] | None:
    """The items ``text`` (a JSON array) adds to ``history``'s when it spells that array's items first, then a comma
    and more; None when it does not."""
    if not text.startswith(history.opening):
        return None
    rest = text[len(history.opening) :].lstrip()
    if rest[:1] != ",":
        return None
    try:
        added = orjson.loads("[" + rest[1:])
    except orjson.JSONDecodeError:
        return None
    return added if isinstance(added, list) and added else None


def _digest(item: Any) -> bytes | None:
    """A JSON message object's digest, what a resent one is known by; None for what JSON cannot spell."""
    if not isinstance(item, dict):
        return None
    try:
        return hashlib.blake2b(orjson.dumps(item), digest_size=16).digest()
    except orjson.JSONEncodeError:
        return None


class MessageReader:
    """Reads one file's messages, sharing the text of resent histories, and collects what has no place."""

    def __init__(self) -> None:
        self.pool = TextPool()
        self.unplaced: list[Any] = []
        self._memo: dict[Hashable, tuple[list[llm.LLMMessage], list[Any]]] = {}
        self._histories: dict[Hashable, _History] = {}
        self._history_chars = 0

    def remembered(self, source: Hashable, read: Callable[[], list[llm.LLMMessage]]) -> list[llm.LLMMessage]:
        """``read()``'s messages, read once per ``source`` (what they were read from, as a hashable value):
        the same objects again for a message resent unchanged, with what it left unplaced. The messages are
        values: the assembly derives changed copies, never changes them."""
        try:
            known = self._memo.get(source)
        except TypeError:  # an array value somewhere in it: read every time
            return read()
        if known is not None:
            self.unplaced.extend(known[1])
            return known[0]
        before = len(self.unplaced)
        messages = read()
        if len(self._memo) >= MEMO_ENTRIES:
            self._memo.clear()
        self._memo[source] = (messages, self.unplaced[before:])
        return messages

    def text(self, value: Any) -> str:
        return self.pool(content_text(value))

    def _media(self, part: dict[str, Any]) -> llm.LLMUserPart | None:
        modality = kind_of(str(part.get("modality") or part.get("mime_type") or ""))
        mime = part.get("mime_type")
        kind = part.get("type")
        if kind == "blob" and isinstance(part.get("content"), str):
            return media_part(modality, data=part["content"], media_type=mime)
        if kind == "uri" and isinstance(part.get("uri"), str):
            return media_part(modality, url=part["uri"], media_type=mime)
        if kind == "image_url":  # chat-completions shape inside the older content lists
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            return llm.LLMImagePart(url=url) if isinstance(url, str) else None
        return None

    def _call(self, part: dict[str, Any]) -> llm.LLMToolCall:
        function: dict[str, Any] = part["function"] if isinstance(part.get("function"), dict) else {}
        name = part.get("name") or function.get("name") or ""
        arguments = part.get("arguments", function.get("arguments", part.get("input")))
        return llm.LLMToolCall(str(part.get("id") or ""), str(name), arguments_text(loads(arguments)))

    def _result(self, part: dict[str, Any]) -> llm.LLMToolMessage:
        value = part.get("response", part.get("result", part.get("content")))
        return llm.LLMToolMessage(
            self.text(value),
            str(part.get("id") or part.get("tool_call_id") or "") or None,
            part.get("name") if isinstance(part.get("name"), str) else None,
        )

    def parts(self, value: Any) -> list[dict[str, Any]]:
        """A message's parts in the current shape, from either generation."""
        value = loads(value)
        if isinstance(value, str):
            return [{"type": "text", "content": value}]
        if isinstance(value, dict):
            value = [value]
        if not isinstance(value, list):
            return []
        out: list[dict[str, Any]] = []
        for part in value:
            if isinstance(part, str):
                out.append({"type": "text", "content": part})
            elif isinstance(part, dict):
                if part.get("type", "text") == "text" and "content" not in part and "text" in part:
                    part = {**part, "type": "text", "content": part["text"]}  # the chat-completions text part
                out.append(part)
        return out

    def message(self, item: Any) -> list[llm.LLMMessage]:
        """One message object of either generation as neutral messages (a user message holding tool results
        gives the results, then the rest of it as a user turn)."""
        if not isinstance(item, dict):
            return [llm.LLMUserMessage((llm.LLMTextPart(self.text(item)),))] if item else []
        role = str(item.get("role") or "user").lower()
        parts = self.parts(item["parts"] if "parts" in item else item.get("content", item.get("text")))
        for call in loads(item.get("tool_calls")) or []:
            if isinstance(call, dict):
                parts.append({**call, "type": "tool_call"})
        if role == "tool" or role == "function":
            results = [p for p in parts if p.get("type") in _TOOL_RESULT_PARTS]
            if results:
                return [self._result(p) for p in results]
            text = "".join(self.text(p.get("content")) for p in parts if p.get("type") == "text")
            call_id = item.get("tool_call_id") or item.get("id")
            call = str(call_id) if call_id else None
            return [llm.LLMToolMessage(self.pool(text), call, item.get("name"), is_error=item.get("is_error") is True)]
        if role == "system" or role == "developer":
            return [llm.LLMSystemMessage(self.pool("\n".join(self.text(p.get("content")) for p in parts)))]
        if role in _ASSISTANT_ROLES:
            return [self._assistant(parts)]
        return self._user(parts)

    def _assistant(self, parts: list[dict[str, Any]]) -> llm.LLMAssistantMessage:
        texts: list[str] = []
        reasoning: list[str] = []
        calls: list[llm.LLMToolCall] = []
        for part in parts:
            kind = part.get("type")
            if kind == "text":
                texts.append(self.text(part.get("content")))
            elif kind in ("reasoning", "thinking"):
                reasoning.append(self.text(part.get("content", part.get("thinking"))))
            elif kind in _TOOL_CALL_PARTS:
                calls.append(self._call(part))
            else:
                self.unplaced.append(part)
        return llm.LLMAssistantMessage(
            self.pool("".join(texts)), self.pool("\n".join(reasoning)) if reasoning else None, tuple(calls)
        )

    def _user(self, parts: list[dict[str, Any]]) -> list[llm.LLMMessage]:
        out: list[llm.LLMMessage] = [self._result(p) for p in parts if p.get("type") in _TOOL_RESULT_PARTS]
        content: list[llm.LLMUserPart] = []
        for part in parts:
            kind = part.get("type")
            if kind in _TOOL_RESULT_PARTS:
                continue
            if kind == "text":
                content.append(llm.LLMTextPart(self.text(part.get("content"))))
                continue
            media = self._media(part)
            if media is None:
                self.unplaced.append(part)
            else:
                content.append(media)
        if content:
            out.append(llm.LLMUserMessage(tuple(content)))
        return out

    def messages(self, items: Any) -> list[llm.LLMMessage]:
        """A JSON list of messages (or a string holding one) as neutral messages; a message object resent unchanged
        (a history is, by every call) is read once, into the same objects."""
        items = loads(items)
        if isinstance(items, dict):
            items = [items]
        if not isinstance(items, list):
            return self.message(items) if items else []
        return self._items(items)

    def history(self, text: Any, thread: Hashable) -> list[llm.LLMMessage]:
        """``messages(text)`` for the history a call resends: when ``text`` continues the JSON array last read under
        ``thread`` (a trace), only the messages it adds are read, after that array's."""
        if not isinstance(text, str):
            return self.messages(text)
        last = self._histories.get(thread)
        added = None if last is None else _continued(text, last)
        before = len(self.unplaced)
        if last is not None and added is not None:
            self.unplaced.extend(last.unplaced)
            messages = [*last.messages, *self._items(added)]
        else:
            items = loads(text)
            if not isinstance(items, list) or not items:
                return self.messages(items)
            messages = self._items(items)
        self._remember(thread, text, messages, self.unplaced[before:])
        return messages

    def _remember(self, thread: Hashable, text: str, messages: list[llm.LLMMessage], unplaced: list[Any]) -> None:
        if self._history_chars >= HISTORY_CHARS:
            self._histories.clear()
            self._history_chars = 0
        opening = text.rstrip()[:-1]
        self._histories[thread] = _History(opening, tuple(messages), tuple(unplaced))
        self._history_chars += len(opening)

    def _items(self, items: list[Any]) -> list[llm.LLMMessage]:
        out: list[llm.LLMMessage] = []
        for item in items:
            key = _digest(item)
            out.extend(self.message(item) if key is None else self.remembered(key, partial(self.message, item)))
        return out

    def with_system(self, value: Any, sent: list[llm.LLMMessage]) -> list[llm.LLMMessage]:
        """``sent`` with the ``gen_ai.system_instructions`` parts (or text) as system messages: first, or where a
        part's ``messageIndex`` (Latitude's SDK records it) says it stood among the messages."""
        parts = [p for p in self.parts(value) if p.get("type") == "text"]
        placed: list[tuple[int, llm.LLMMessage]] = []
        leading: list[str] = []
        for part in parts:
            known = (part.get("_provider_metadata") or {}).get("_known_fields") or {}
            index = known.get("messageIndex") if isinstance(known, dict) else None
            text = self.text(part.get("content"))
            if isinstance(index, int) and not isinstance(index, bool) and index > 0:
                placed.append((index, llm.LLMSystemMessage(text)))
            else:
                leading.append(text)
        out = ([llm.LLMSystemMessage(self.pool("\n".join(leading)))] if leading else []) + list(sent)
        for index, message in sorted(placed, key=lambda pair: pair[0]):
            out.insert(min(index, len(out)), message)
        return out


Flat = tuple[tuple[str, Any], ...]
"""One ``prefix.N`` entry's ``(key, value)`` attributes, in the span's order (hashable when its values are)."""


def flat_entries(attributes: dict[str, Any], prefixes: tuple[str, ...]) -> dict[str, list[Flat]]:
    """``prefix.N.key`` attributes of each prefix (none the start of another) grouped by ``N``, in one pass over
    the attributes; each prefix's entries in index order. A span resending a long history holds thousands."""
    found: dict[str, dict[int, list[tuple[str, Any]]]] = {prefix: {} for prefix in prefixes}
    for name, value in attributes.items():
        for prefix in prefixes:
            if name.startswith(prefix):
                head, _, rest = name[len(prefix) :].partition(".")
                if head.isdigit() and rest:
                    found[prefix].setdefault(int(head), []).append((rest, value))
                break
    return {prefix: [tuple(entries[i]) for i in sorted(entries)] for prefix, entries in found.items()}


def nested(entry: Flat) -> Any:
    """One flat entry (``key`` may itself be ``tool_calls.M.name``) as nested dicts and lists."""
    out: dict[str, Any] = {}
    for rest, value in entry:
        _set_path(out, rest.split("."), value)
    return _listify(out)


def indexed(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.N.key`` attributes (``key`` may itself be ``tool_calls.M.name``) as a list of nested dicts."""
    return [nested(entry) for entry in flat_entries(attributes, (prefix,))[prefix]]


def _set_path(target: dict[str, Any], path: list[str], value: Any) -> None:
    for step in path[:-1]:
        nxt = target.get(step)
        if not isinstance(nxt, dict):
            nxt = {}
            target[step] = nxt
        target = nxt
    target[path[-1]] = value


def _listify(value: Any) -> Any:
    """Dicts keyed by 0, 1, ... as lists, all the way down (leaves are not called on: most values are leaves)."""
    if not isinstance(value, dict):
        return value
    if value and all(k.isdigit() for k in value):
        return [_listify(v) if type(v) is dict else v for v in (value[k] for k in sorted(value, key=int))]
    return {k: _listify(v) if type(v) is dict else v for k, v in value.items()}


def joined(groups: Iterable[list[llm.LLMMessage]]) -> tuple[llm.LLMMessage, ...]:
    """Several lists of messages as one tuple."""
    return tuple(m for group in groups for m in group)
