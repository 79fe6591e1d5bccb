"""Long card text collapses, and "show all" reads the whole field of its record, past the 20,000-character preview."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER, Message
from tests.web.web_corpus import BASE_URL, every_kind, make_app
from tests.web.web_html import parse
from web import urls

CID = "c/long?x=1"
TOOL_ID = "tool/1#x"
LINES = [f"{i:05d} <b>row</b> " + "y" * 40 for i in range(600)]
RESULT = "\n".join(LINES) + "\nEND-OF-RESULT"
ARGUMENTS = '{"query": "' + "q" * 3_000 + '"}'


def _msg(**fields: Any) -> Message:
    return MESSAGE_ADAPTER.validate_python({"conversation_id": CID, **fields})


def _conversation() -> list[Message]:
    call = {"id": "c1", "name": "search", "arguments": ARGUMENTS}
    return [
        _msg(
            role="user",
            msg_type="text",
            msg_id="u1",
            create_ts=1,
            content="short question",
            intermediate_trace={
                "records": [
                    {"role": "assistant", "msg_type": "text", "msg_id": "a1", "create_ts": 2, "tool_calls": [call]},
                    {
                        "role": "tool",
                        "msg_id": TOOL_ID,
                        "create_ts": 3,
                        "tool_reses": [{"call_id": "c1", "result": RESULT}],
                    },
                ]
            },
        ),
        _msg(role="assistant", msg_type="text", msg_id="a2", create_ts=4, content="a short answer"),
    ]


@pytest.fixture(scope="module")
def long_client() -> Iterator[TestClient[Litestar]]:
    with TestClient(make_app(_conversation()), base_url=BASE_URL) as client:
        yield client


def _card(page_html: str, msg_id: str) -> list[Any]:
    elements = parse(page_html).elements
    start = next(i for i, el in enumerate(elements) if el.tag == "article" and el.get("data-msg-id") == msg_id)
    end = next((i for i in range(start + 1, len(elements)) if elements[i].tag == "article"), len(elements))
    return elements[start:end]


def test_a_long_tool_result_is_collapsed_with_show_all(long_client: TestClient[Litestar]) -> None:
    page = long_client.get(urls.conversation(CID)).text
    card = _card(page, TOOL_ID)
    assert any(el.tag == "pre" and el.has("data-collapsed") for el in card)
    (link,) = [el for el in card if el.has("data-show-all")]
    assert f"show all ({len(RESULT):,} characters)" in page
    assert link.get("href") == urls.record_field(CID, TOOL_ID, "/tool_reses/0/result")


def test_short_text_stays_open(long_client: TestClient[Litestar]) -> None:
    page = long_client.get(urls.conversation(CID)).text
    assert not any(el.has("data-collapsed") or el.has("data-show-all") for el in _card(page, "a2"))


def test_show_all_reads_the_whole_value_beyond_the_preview(long_client: TestClient[Litestar]) -> None:
    assert len(RESULT) > 20_000
    page = long_client.get(urls.conversation(CID)).text
    assert "END-OF-RESULT" not in page  # the page holds the 20,000-character preview only
    (link,) = [el for el in _card(page, TOOL_ID) if el.has("data-show-all")]
    whole = long_client.get(link.get("data-field-api") or "").json()
    assert whole["text"] == RESULT and whole["chars"] == len(RESULT)
    assert whole["msg_id"] == TOOL_ID and whole["conversation_id"] == CID
    as_page = long_client.get(link.get("href") or "")
    assert as_page.status_code == 200
    assert "&lt;b&gt;row&lt;/b&gt;" in as_page.text and "<b>row</b>" not in as_page.text  # escaped
    assert html.unescape(as_page.text).count("END-OF-RESULT") == 1


def test_tool_call_arguments_collapse_and_read_whole(long_client: TestClient[Litestar]) -> None:
    page = long_client.get(urls.conversation(CID)).text
    (link,) = [el for el in _card(page, "a1") if el.has("data-show-all")]
    whole = long_client.get(link.get("data-field-api") or "").json()
    assert json.loads(whole["text"]) == json.loads(ARGUMENTS)  # the card's own text (pretty-printed), whole


def test_an_unknown_field_or_record_is_a_404(long_client: TestClient[Litestar]) -> None:
    assert long_client.get(urls.api_record_field(CID, TOOL_ID, "/nope")).status_code == 404
    assert long_client.get(urls.api_record_field(CID, "missing", "/content")).status_code == 404
    assert long_client.get(urls.record_field("no-such", TOOL_ID, "/content")).status_code == 404


def test_every_collapsed_field_of_every_card_kind_reads_whole() -> None:
    text = "\n".join(f"line {i:02d} of a long field" for i in range(40))
    with TestClient(make_app(every_kind(text)), base_url=BASE_URL) as client:
        page = client.get(urls.conversation("c-every"), params={"offset": 0}).text
        links = [el.get("data-field-api") for el in parse(page).elements if el.has("data-field-api")]
        assert len(links) >= 20  # text, reasoning, tool arguments and results, console, parts, history, scripts...
        for link in links:
            response = client.get(link or "")
            assert response.status_code == 200, link
            assert "line 39 of a long field" in response.json()["text"], link
