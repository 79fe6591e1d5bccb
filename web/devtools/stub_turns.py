"""The stub's turn scripts: an answer chosen by where a request stands in a turn, so a replay can be repeated.

A turn script names a model, a marker (a text of the turn's user message) and the answers of the turn's
steps. A request for that model whose messages hold the marker gets the answer of step k + 1, k being
the assistant turns after the message that holds it (a step replay appends one per step). Nothing is
consumed: the same replay gets the same answers however often, and however many run at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

ITEMS_KEY = {"openai": "messages", "anthropic": "messages", "gemini": "contents", "openai-responses": "input"}
"""Where each wire format keeps the conversation in a request body."""


def step_of(dialect: str, body: Any, markers: Iterable[str]) -> tuple[str, int] | None:
    """The marker whose first message comes last in ``body``, and the assistant turns after that message."""
    items = body.get(ITEMS_KEY[dialect]) if isinstance(body, dict) else None
    if not isinstance(items, list):
        return None
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        texts = list(_strings(item))
        for marker in markers:
            if marker not in first and any(marker in text for text in texts):
                first[marker] = i
    if not first:
        return None
    marker = max(first, key=lambda m: first[m])
    return marker, _assistant_turns(dialect, items[first[marker] + 1 :])


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _assistant_turns(dialect: str, items: list[Any]) -> int:
    """Assistant messages (Gemini: ``model``); for Responses, a run of function calls or an assistant message."""
    count = 0
    calling = False
    for item in items:
        item = item if isinstance(item, dict) else {}
        call = dialect == "openai-responses" and item.get("type") == "function_call"
        if (call and not calling) or item.get("role") in ("assistant", "model"):
            count += 1
        calling = call
    return count
