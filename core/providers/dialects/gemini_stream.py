"""A streamed generateContent answer folded into the one ``GenerateContentResponse`` its reader takes.

``streamGenerateContent`` answers with chunks, each a ``GenerateContentResponse`` holding the candidates' new
parts (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent): as Server-Sent Events
with ``alt=sse``, else as one JSON array. Text arrives split over chunks, so a text part continues the text part
before it when both are thoughts or both are not (a signature given with a later piece belongs to the whole);
every other part (a function call, code, inline data) is whole in its chunk. The last chunk carries the finish
reason and the final usage.
"""

from __future__ import annotations

from typing import Any

from core.providers.base import JSON
from core.providers.reading import as_list, as_object
from core.providers.streamed import StreamEvents, at, cut_short, event_object, failed

# Candidate fields of the last chunk that gave them (the content is folded apart).
CANDIDATE_KEYS = ("finishReason", "finishMessage", "safetyRatings", "citationMetadata", "groundingMetadata")


def fold(events: StreamEvents) -> JSON:
    """The response the chunks make; refused when no chunk gives a finish reason (the stream stopped early)
    and no prompt feedback says the prompt was blocked."""
    answer: JSON = {}
    candidates: dict[int, dict[str, Any]] = {}
    finished = False
    for i in range(len(events)):
        chunk = event_object(events, i)
        if chunk.get("error") is not None:
            raise failed(i, chunk["error"])
        for key, value in chunk.items():
            if key != "candidates" and value is not None:
                answer[key] = value  # usage, model version, response id, prompt feedback: the last given
        for j, raw in enumerate(as_list(chunk.get("candidates") or [], f"{at(i)}.candidates")):
            piece = as_object(raw, f"{at(i)}.candidates[{j}]")
            index = piece.get("index", 0)
            candidate = candidates.setdefault(index, {"content": {"parts": [], "role": "model"}, "index": index})
            content = as_object(piece.get("content") or {}, f"{at(i)}.candidates[{j}].content")
            parts = as_list(content.get("parts") or [], f"{at(i)}.candidates[{j}].content.parts")
            for k, part in enumerate(parts):
                _add(candidate["content"]["parts"], as_object(part, f"{at(i)}.candidates[{j}].content.parts[{k}]"))
            for key, value in piece.items():
                if key not in ("content", "index") and value is not None:
                    candidate[key] = value
            finished = finished or piece.get("finishReason") is not None
    blocked = isinstance(answer.get("promptFeedback"), dict) and "blockReason" in answer["promptFeedback"]
    if not finished and not blocked:
        raise cut_short(events, "a chunk with a finishReason")
    if candidates:
        answer["candidates"] = [candidates[k] for k in sorted(candidates)]
    return answer


def _add(parts: list[dict[str, Any]], part: JSON) -> None:
    last = parts[-1] if parts else None
    if (
        last is not None
        and isinstance(part.get("text"), str)
        and isinstance(last.get("text"), str)
        and bool(part.get("thought")) == bool(last.get("thought"))
        and "thoughtSignature" not in last
    ):
        last["text"] += part["text"]
        if "thoughtSignature" in part:
            last["thoughtSignature"] = part["thoughtSignature"]
        return
    parts.append(dict(part))
