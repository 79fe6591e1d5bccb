"""An agent's saved transcript (pydantic-ai, inspect_ai, the Vercel AI SDK) as the model calls that made it.

A transcript holds each message once, where a span export resends the history on every call: each assistant
message is one call's answer, and that call's input is every message before it. ``CallsOfTranscript`` walks a
transcript once and yields those calls, so the three readers hand the assembler what the span readers do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import orjson

from core.formats.events import ConversationKey, ModelCall, SourceRef
from core.llm.messages import LLMMessage
from core.request_context.stored import StoredRequest


def conversation_key(explicit: Any, first: Any, prefix: str) -> ConversationKey:
    """The transcript's own conversation id, else one derived from its first message as recorded (ids and
    times included), so that the same file keys the same conversation on every import."""
    if isinstance(explicit, str | int) and not isinstance(explicit, bool) and str(explicit):
        return ConversationKey(conversation=str(explicit))
    digest = hashlib.sha256(orjson.dumps(first, option=orjson.OPT_SORT_KEYS)).hexdigest()[:20]
    return ConversationKey(conversation=f"{prefix}-{digest}")


class CallsOfTranscript:
    """The calls of one transcript, in order: messages sent are added with ``send``, each answer with
    ``answer``; ``finish`` gives the calls, and a last one for messages no answer followed. What a sent message
    held that has no place (``keep``) is kept with the next answer's extra data."""

    def __init__(self, key: ConversationKey) -> None:
        self.key = key
        self.history: list[LLMMessage] = []
        self.answered = 0
        self.last: datetime | None = None
        self.calls: list[ModelCall] = []
        self.pending: list[Any] = []

    def _after_last(self, when: datetime | None) -> datetime | None:
        """``when``, or the previous call's time when it is earlier: the transcript's order is the calls' order,
        whatever clocks (a provider's, truncated to the second; the agent's) recorded."""
        if when is None or self.last is None:
            self.last = when or self.last
            return when
        self.last = max(when, self.last)
        return self.last

    def send(self, messages: Iterable[LLMMessage]) -> None:
        self.history.extend(messages)

    def keep(self, unplaced: Iterable[Any]) -> None:
        self.pending.extend(unplaced)

    def answer(
        self,
        output: Iterable[LLMMessage],
        source: SourceRef,
        *,
        request: StoredRequest | None = None,
        started_at: datetime | None = None,
        ended_at: datetime | None = None,
        extra: dict[str, Any] | None = None,
    ) -> ModelCall:
        answered = tuple(output)
        extra = dict(extra or {})
        if self.pending:
            extra["parts"] = [*self.pending, *extra.get("parts", [])]
            self.pending = []
        started_at = self._after_last(started_at)
        ended_at = self._after_last(ended_at)
        call = ModelCall(
            source=source,
            key=self.key,
            input=tuple(self.history),
            output=answered,
            request=request,
            started_at=started_at,
            ended_at=ended_at,
            extra=extra,
        )
        self.history.extend(answered)
        self.answered = len(self.history)
        self.calls.append(call)
        return call

    def finish(self, source: SourceRef, at: datetime | None = None) -> list[ModelCall]:
        """Every call; when messages were sent after the last answer, a last call whose answer the transcript
        does not hold (reported as not captured)."""
        if self.pending and self.calls:
            self.calls[-1].extra.setdefault("parts", []).extend(self.pending)
            self.pending = []
        if len(self.history) == self.answered:
            return self.calls
        at = self._after_last(at)
        rest = ModelCall(source, self.key, tuple(self.history), None, started_at=at, ended_at=at)
        return [*self.calls, rest]
