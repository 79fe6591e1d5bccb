"""A streamed Chat Completions answer folded into the ``chat.completion`` its reader takes.

The stream (https://platform.openai.com/docs/api-reference/chat-streaming) is ``chat.completion.chunk`` objects
and a last ``data: [DONE]``. Each choice's ``delta`` extends its message: content, refusal and reasoning text
(``reasoning_content``, ``reasoning``) are appended, tool calls are merged by their ``index`` with the argument
fragments appended (as the OpenAI SDK's ``accumulate_delta`` does); the finish reason is the last one given;
usage comes in the last chunk (``stream_options.include_usage``), whose choices are empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.providers.base import JSON
from core.providers.reading import as_list, as_object
from core.providers.streamed import StreamEvents, at, cut_short, event_object, failed, merge_delta
from core.request_context.shapes import RequestFieldError

END = "[DONE]"
"""The data of the event that ends the stream (not JSON)."""
# Chunk fields the answer keeps as they are: the first given (ids) or the last (usage, fingerprint).
FIRST_KEYS = ("id", "created", "model")
LAST_KEYS = ("usage", "system_fingerprint", "service_tier")


def fold(events: StreamEvents) -> JSON:
    """The ``chat.completion`` the chunks of ``events`` make; refused when the stream has no ``[DONE]``."""
    for i, event in enumerate(events):
        if isinstance(event, Mapping) and event.get("error") is not None:
            raise failed(i, event["error"])  # Groq ends a failed call with an error event and no [DONE]
    if not events or events[-1] != END:
        ended = [i for i, e in enumerate(events) if e == END]
        if ended:
            raise RequestFieldError(at(ended[0] + 1), f"an event after {END}")
        raise cut_short(events, f"data: {END}")
    answer: JSON = {"object": "chat.completion"}
    choices: dict[int, dict[str, Any]] = {}
    for i in range(len(events) - 1):
        chunk = event_object(events, i)
        for key in FIRST_KEYS:
            if chunk.get(key) is not None:
                answer.setdefault(key, chunk[key])
        for key in LAST_KEYS:
            if chunk.get(key) is not None:
                answer[key] = chunk[key]
        for j, raw in enumerate(as_list(chunk.get("choices") or [], f"{at(i)}.choices")):
            part = as_object(raw, f"{at(i)}.choices[{j}]")
            index = part.get("index", 0)
            choice = choices.setdefault(index, {"index": index, "message": {"role": "assistant"}})
            merge_delta(choice["message"], as_object(part.get("delta") or {}, f"{at(i)}.choices[{j}].delta"))
            if part.get("finish_reason") is not None:
                choice["finish_reason"] = part["finish_reason"]
    answer["choices"] = [choices[k] for k in sorted(choices)]
    for choice in answer["choices"]:
        for call in choice["message"].get("tool_calls") or []:
            call.pop("index", None)  # a stream's bookkeeping, not a field of the answer's call
    return answer
