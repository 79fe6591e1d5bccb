"""Vercel AI SDK messages read into model calls: the UI messages a chat keeps, and the model messages sent.

Two shapes of one conversation (https://ai-sdk.dev/docs/reference/ai-sdk-core/ui-message and
``model-message``), told apart by their first message: ``parts`` (UI) or ``content`` (model).

* **UI messages** (``UIMessage``: ``id``, ``role``, ``parts``): an assistant message holds every step of one
  answer, each opened by a ``step-start`` part; a step's ``text`` and ``reasoning`` parts and its tool parts
  (``tool-<name>``, or ``dynamic-tool`` with its ``toolName``) are one call's answer, and the tool parts'
  outputs (``state`` ``output-available``, ``output-error``, ``output-denied``) are the results sent next.
* **Model messages** (``ModelMessage``: ``role`` system, user, assistant or tool; ``content`` a string or
  parts ``text``, ``image``, ``file``, ``reasoning``, ``tool-call``, ``tool-result``): each assistant message is
  one call's answer.

Tools the provider ran (``providerExecuted``), approvals, sources, files in answers and ``data-*`` parts have
no place in a stored turn and are kept aside. A file holds one conversation (a JSON array), or
``{"messages": [...]}`` as a chat request body sends them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO, Any

import orjson

from core.errors import InputError
from core.formats.events import Event, SourceRef
from core.formats.span_fields import TextPool, arguments_text, content_text
from core.formats.transcript_calls import CallsOfTranscript, conversation_key
from core.formats.vercel_parts import media, tool_output
from core.llm import messages as llm

_CAMEL_CALL_ID = re.compile(rb'"toolCallId"\s*:')
_UI_TEXT_PART = re.compile(rb'"parts"\s*:\s*\[\s*\{[^{}]*"type"\s*:\s*"(text|step-start|reasoning|file)"')
_MODEL_PART = re.compile(rb'"type"\s*:\s*"(tool-call|tool-result|reasoning)"')


def looks_like_vercel_ai(head: bytes) -> bool:
    """Whether a file's first bytes hold AI SDK messages: camelCase ``toolCallId``s, UI ``parts``, or model
    parts only the SDK writes; never our own records (``msg_type``)."""
    start = head.lstrip()[:1]
    if start not in (b"[", b"{") or b'"role"' not in head or b'"msg_type"' in head or b'"part_kind"' in head:
        return False
    return bool(_CAMEL_CALL_ID.search(head) or _UI_TEXT_PART.search(head) or _MODEL_PART.search(head))


class _Reader:
    """One file's messages, sharing repeated text."""

    def __init__(self) -> None:
        self.pool = TextPool()

    def _user(self, parts: list[Any], unplaced: list[Any]) -> list[llm.LLMMessage]:
        content: list[llm.LLMUserPart] = []
        for part in parts:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                content.append(llm.LLMTextPart(self.pool(str(part.get("text") or ""))))
                continue
            found = media(part) if isinstance(part, dict) else None
            if found is None:
                unplaced.append(part)
            else:
                content.append(found)
        return [llm.LLMUserMessage(tuple(content))] if content else []

    def _system(self, content: Any) -> llm.LLMSystemMessage:
        if isinstance(content, list):
            content = "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
        return llm.LLMSystemMessage(self.pool(content_text(content)))

    def ui_events(self, messages: list[Any], path: str) -> Iterator[Event]:
        """The calls of a UI conversation: each step of an assistant message is one."""
        walk = CallsOfTranscript(conversation_key(None, messages[0] if messages else None, "vercel-ai"))
        for index, message in enumerate(messages):
            where = _where(message, index)
            parts = _parts(message, path, where, "parts")
            role = message.get("role")
            if role == "system":
                walk.send([self._system(parts)])
            elif role == "user":
                unplaced: list[Any] = []
                walk.send(self._user(parts, unplaced))
                walk.keep(unplaced)
            elif role == "assistant":
                for step, step_parts in enumerate(_steps(parts)):
                    answer, results, unplaced = self._ui_step(step_parts)
                    if answer is None:
                        walk.keep(unplaced)
                        continue
                    source = SourceRef(path, None, f"{where}#step{step}")
                    walk.answer((answer,), source, extra={"parts": unplaced} if unplaced else None)
                    walk.send(results)
            else:
                raise InputError(f"unknown role {role!r}", source=path, path=f"{where}.role")
        yield from walk.finish(SourceRef(path, None, _where(messages[-1], len(messages) - 1) if messages else None))

    def _ui_step(self, parts: list[Any]) -> tuple[llm.LLMAssistantMessage | None, list[llm.LLMMessage], list[Any]]:
        texts: list[str] = []
        reasoning: list[str] = []
        calls: list[llm.LLMToolCall] = []
        results: list[llm.LLMMessage] = []
        unplaced: list[Any] = []
        for part in parts:
            kind = str(part.get("type") or "") if isinstance(part, dict) else ""
            if kind == "text":
                texts.append(str(part.get("text") or ""))
            elif kind == "reasoning":
                reasoning.append(str(part.get("text") or ""))
            elif (kind.startswith("tool-") or kind == "dynamic-tool") and not part.get("providerExecuted"):
                name = str(part.get("toolName") or "") if kind == "dynamic-tool" else kind[len("tool-") :]
                call_id = str(part.get("toolCallId") or "")
                given = part.get("input")  # an input that failed to parse is kept as rawInput
                calls.append(
                    llm.LLMToolCall(call_id, name, arguments_text(given if given is not None else part.get("rawInput")))
                )
                result = tool_output(part)
                if result is not None:
                    text, is_error = result
                    results.append(llm.LLMToolMessage(self.pool(text), call_id or None, name, is_error))
                if part.get("approval") is not None:
                    unplaced.append({"toolCallId": call_id, "approval": part["approval"]})
            else:  # step-start, sources, files, data-*, provider-run tools: no place in a stored turn
                if kind != "step-start":
                    unplaced.append(part)
        if not texts and not reasoning and not calls:
            return None, [], unplaced
        text = self.pool("".join(texts))
        thought = self.pool("\n".join(reasoning)) if reasoning else None
        return llm.LLMAssistantMessage(text, thought, tuple(calls)), results, unplaced

    def model_events(self, messages: list[Any], path: str) -> Iterator[Event]:
        """The calls of a model-message conversation: each assistant message answers those before it."""
        walk = CallsOfTranscript(conversation_key(None, messages[0] if messages else None, "vercel-ai"))
        for index, message in enumerate(messages):
            where = f"[{index}]"
            if not isinstance(message, dict):
                raise InputError("expected a message object", source=path, path=where)
            role, content = message.get("role"), message.get("content")
            parts = (
                [{"type": "text", "text": content}]
                if isinstance(content, str)
                else _parts(message, path, where, "content")
            )
            unplaced: list[Any] = []
            if role == "system":
                walk.send([self._system(content)])
            elif role == "user":
                walk.send(self._user(parts, unplaced))
            elif role == "assistant":
                answer = self._model_answer(parts, unplaced)
                walk.answer((answer,), SourceRef(path, None, where), extra={"parts": unplaced} if unplaced else None)
                continue
            elif role == "tool":
                walk.send(self._model_results(parts, unplaced))
            else:
                raise InputError(f"unknown role {role!r}", source=path, path=f"{where}.role")
            walk.keep(unplaced)
        yield from walk.finish(SourceRef(path, None, f"[{len(messages) - 1}]"))

    def _model_answer(self, parts: list[Any], unplaced: list[Any]) -> llm.LLMAssistantMessage:
        texts: list[str] = []
        reasoning: list[str] = []
        calls: list[llm.LLMToolCall] = []
        for part in parts:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                texts.append(str(part.get("text") or ""))
            elif kind == "reasoning":
                reasoning.append(str(part.get("text") or ""))
            elif kind == "tool-call" and not part.get("providerExecuted"):
                given = part.get("input", part.get("args"))
                calls.append(
                    llm.LLMToolCall(
                        str(part.get("toolCallId") or ""), str(part.get("toolName") or ""), arguments_text(given)
                    )
                )
            else:  # a provider-run tool's call or result, a file, an approval request
                unplaced.append(part)
        thought = self.pool("\n".join(reasoning)) if reasoning else None
        return llm.LLMAssistantMessage(self.pool("".join(texts)), thought, tuple(calls))

    def _model_results(self, parts: list[Any], unplaced: list[Any]) -> list[llm.LLMMessage]:
        out: list[llm.LLMMessage] = []
        for part in parts:
            if not isinstance(part, dict) or part.get("type") != "tool-result":
                unplaced.append(part)  # an approval response
                continue
            text, is_error = tool_output(part) or ("", False)
            call_id = part.get("toolCallId")
            name = part.get("toolName")
            out.append(
                llm.LLMToolMessage(
                    self.pool(text),
                    str(call_id) if call_id else None,
                    name if isinstance(name, str) else None,
                    is_error,
                )
            )
        return out


def _where(message: Any, index: int) -> str:
    ident = message.get("id") if isinstance(message, dict) else None
    return f"[{index}]" if not isinstance(ident, str) or not ident else f"[{index}]({ident})"


def _parts(message: Any, path: str, where: str, field: str) -> list[Any]:
    if not isinstance(message, dict):
        raise InputError("expected a message object", source=path, path=where)
    parts = message.get(field)
    if not isinstance(parts, list):
        raise InputError(f"expected {field} to be a JSON array", source=path, path=f"{where}.{field}")
    return parts


def _steps(parts: list[Any]) -> list[list[Any]]:
    """An assistant UI message's parts, split where each step starts."""
    steps: list[list[Any]] = [[]]
    for part in parts:
        if isinstance(part, dict) and part.get("type") == "step-start" and steps[-1]:
            steps.append([])
        steps[-1].append(part)
    return steps


def read_vercel_ai(stream: IO[bytes], path: str) -> Iterator[Event]:
    """The calls of an AI SDK conversation file: UI messages or model messages, as its first message shows."""
    try:
        document = orjson.loads(stream.read())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc}", source=path) from None
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        document = document["messages"]
    if not isinstance(document, list):
        raise InputError('expected a JSON array of AI SDK messages (or {"messages": [...]})', source=path)
    reader = _Reader()
    first = next((m for m in document if isinstance(m, dict)), {})
    if "parts" in first:
        yield from reader.ui_events(document, path)
    else:
        yield from reader.model_events(document, path)
