"""The dashboard's check reads an upload's request contexts as ``traceloupe check`` does: a recorded call of a
tool its turn was not offered is listed, a bad context is the one error line, other export lines are refused."""

from __future__ import annotations

import json

from litestar import Litestar
from litestar.testing import TestClient

from tests.replay.steps_data import STEPS_CONVERSATION, TURN, steps_conversation
from tests.web.web_corpus import csrf_cookie
from tests.web.web_html import parse

OFFERED = [{"name": n, "parameters": {"type": "object", "properties": {}}} for n in ("search_flights", "book")]


def _upload(client: TestClient[Litestar], *extra: dict[str, object]) -> tuple[int, str]:
    body = b"\n".join(json.dumps(line).encode() for line in [*steps_conversation(), *extra])
    client.get("/check")
    token = csrf_cookie(client.cookies)
    response = client.post("/check", files={"data": ("agent.jsonl", body)}, data={"_csrf_token": token})
    return response.status_code, " ".join(parse(response.text).text.split())


def test_calls_of_tools_the_turn_was_not_offered_are_listed_and_bad_contexts_refused(
    client: TestClient[Litestar],
) -> None:
    context = {"conversation_id": STEPS_CONVERSATION, "turn": TURN, "tools": OFFERED}
    status, text = _upload(client, {"traceloupe_request": context})
    assert status == 200
    assert "2 undefined tool calls" in text
    assert "agent.jsonl:2 $.intermediate_trace.records[4]" in text and "hotel" in text and "weather" in text

    status, text = _upload(client, {"traceloupe_request": {**context, "tool_choice": {"name": "hotel"}}})
    assert status == 400
    assert "agent.jsonl:3 at $.traceloupe_request.tool_choice.name: not a request context" in text

    status, text = _upload(client, {"traceloupe_suite": {"name": "s", "filter": {}, "created_at": 1}})
    assert status == 400
    assert "agent.jsonl:3 at $: a traceloupe_suite line of an export, not a message" in text
