"""``/api``: the same conversations as JSON in the stored format, and the OpenAPI schema at ``/schema``."""

from __future__ import annotations

import json

from litestar import Litestar
from litestar.testing import TestClient

from core import MESSAGES_ADAPTER, AssistantTextMessage, BaseMessage, IntermediateTrace, TextMessage
from tests.web.web_corpus import BASE_URL, every_kind, temp_store
from web.app import create_app
from web.settings import Settings


def test_list_conversations(client: TestClient[Litestar]) -> None:
    body = client.get("/api/conversations").json()
    rows = {row["conversation_id"]: row for row in body["conversations"]}
    assert rows["c-every"] == {
        "conversation_id": "c-every",
        "title": "plain text",
        "messages": 11,
        "turns": 11,
        "records": 15,
        "damaged": 3,
        "runs": 0,
        "first_ts": 1_700_000_002_000,
        "last_activity": 1_700_000_045_000,  # the trace record inside the forwarded history
    }
    assert rows["c-long"]["records"] == 250
    assert body["next_cursor"] is None


def test_conversation_messages_round_trip_with_their_types(client: TestClient[Litestar]) -> None:
    first = client.get("/api/conversations/c-every?limit=4").json()
    assert (first["total"], first["offset"], first["next_offset"], len(first["messages"])) == (11, 0, 4, 4)
    rest = client.get("/api/conversations/c-every?offset=4&limit=100").json()
    assert rest["next_offset"] is None and len(rest["messages"]) == 7
    parsed = MESSAGES_ADAPTER.validate_python(first["messages"] + rest["messages"])
    expected = every_kind("plain text", conversation_id="c-every")
    assert MESSAGES_ADAPTER.dump_python(parsed, mode="json") == MESSAGES_ADAPTER.dump_python(expected, mode="json")
    records = parsed[0].intermediate_trace.records  # type: ignore[union-attr]
    assert isinstance(records[2], AssistantTextMessage)  # the subclass survived the API
    assert type(records[7]) is BaseMessage and records[7].role == "assistant"  # the damaged one stays damaged


def test_api_errors_are_json(client: TestClient[Litestar]) -> None:
    missing = client.get("/api/conversations/nope")
    assert missing.status_code == 404
    assert missing.json() == {"status_code": 404, "detail": "No conversation with id 'nope'."}
    bad = client.get("/api/conversations/c-every?limit=0")
    assert bad.status_code == 400 and bad.json()["status_code"] == 400


def test_schema_documents_the_api_only(client: TestClient[Litestar]) -> None:
    schema = client.get("/schema").json()
    assert schema["openapi"].startswith("3.")
    assert set(schema["paths"]) == {
        "/api/conversations",
        "/api/conversations/{conversation_id}",
        "/api/conversations/{conversation_id}/payload/{provider}",
        "/api/conversations/{conversation_id}/diff",
        "/api/conversations/{conversation_id}/runs",
        "/api/conversations/{conversation_id}/records/{msg_id}/field",
        "/api/conversations/{conversation_id}/secrets/{digest}",
        "/api/runs",
        "/api/runs/{run_id}",
        "/api/step-runs/{run_id}",
    }
    assert client.get("/schema/openapi.json").json() == schema


def test_integers_past_64_bits_come_back_exactly() -> None:
    big = 123456789012345678901234567890
    message = TextMessage(
        msg_id="u-big",
        conversation_id="c-big",
        content="ids from 128-bit counters",
        additional_kwargs={"span_id": big},
        intermediate_trace=IntermediateTrace(
            records=[BaseMessage(role="system", msg_id="s-big", content="x", additional_kwargs={"span_id": -big})]
        ),
    )
    with TestClient(create_app(Settings(), temp_store([message])), base_url=BASE_URL) as client:
        response = client.get("/api/conversations/c-big")
        assert response.status_code == 200, response.text
        (got,) = json.loads(response.text)["messages"]  # the stdlib keeps the integers exact
        assert got["additional_kwargs"] == {"span_id": big}
        assert got["intermediate_trace"]["records"][0]["additional_kwargs"] == {"span_id": -big}
        page = client.get("/conversations/c-big")
        assert page.status_code == 200


def test_a_forged_cursor_past_64_bits_is_a_400_on_every_listing(client: TestClient[Litestar]) -> None:
    """Integer overflow through a page cursor: a 400 naming the cursor, never a 500 (both backends share the check)."""
    import base64

    forged = base64.urlsafe_b64encode(json.dumps(["recent", 2**63, 1]).encode()).decode().rstrip("=")
    runs = base64.urlsafe_b64encode(json.dumps(["runs", 2**63, 1]).encode()).decode().rstrip("=")
    for url in (
        f"/?after={forged}",
        f"/api/conversations?cursor={forged}",
        f"/api/runs?cursor={runs}",
        f"/api/conversations/c-every/runs?cursor={runs}",
        "/api/runs?cursor=%25%25",
    ):
        response = client.get(url)
        assert response.status_code == 400, url
        assert "cursor" in response.text, url
