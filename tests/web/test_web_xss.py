"""Hostile text in every field of every card kind renders as text and runs nothing (security.md §1a)."""

from __future__ import annotations

import html
from urllib.parse import quote

import pytest
from litestar.testing import TestClient

from tests.web.web_corpus import BASE_URL, XSS_PAYLOADS, every_kind, make_app
from tests.web.web_html import live_content, parse
from web.timeline import Timeline


def test_corpus_is_large_enough() -> None:
    assert len(set(XSS_PAYLOADS)) >= 20


def test_every_kind_carries_the_payload() -> None:
    kinds = {card.kind for card in Timeline(every_kind("x")).page(0, 1000).cards}
    nested = {
        c.kind
        for card in Timeline(every_kind("x")).page(0, 1000).cards
        if card.kind == "user-history"
        for c in card.body.cards
    }  # type: ignore[union-attr]
    from web.timeline import CARD_KINDS

    assert kinds | nested == set(CARD_KINDS)


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_payload_is_inert_on_every_page(payload: str) -> None:
    # A "/" in a conversation id cannot be routed (ASGI decodes %2F before routing), so it is swapped out there.
    cid = payload.replace("/", "|")
    app = make_app(every_kind(payload, conversation_id=cid))
    with TestClient(app, base_url=BASE_URL) as client:
        pages = {
            "list": client.get("/"),
            "search": client.get(f"/?q={quote(payload, safe='')}&damaged=1"),
            "timeline": client.get(f"/conversations/{quote(cid, safe='')}"),
            "fragment": client.get(f"/conversations/{quote(cid, safe='')}?offset=3", headers={"HX-Request": "true"}),
            "404": client.get(f"/nothing/{quote(payload, safe='')}"),
            "missing conversation": client.get(f"/conversations/{quote(cid + 'x', safe='')}"),
        }
    assert pages["timeline"].status_code == 200
    assert pages["fragment"].status_code == 200
    for name, response in pages.items():
        assert response.status_code in (200, 404), name
        problems = live_content(response.text)
        assert problems == [], f"{name}: {problems}"
    # The payload is shown, literally, as text: in the timeline (many times) and on the list (as the title).
    timeline_text = parse(pages["timeline"].text).text
    assert timeline_text.count(payload) >= 20
    assert " ".join(payload.split())[:60] in parse(pages["list"].text).text
    # Jinja syntax in data is data: the template engine never evaluated it.
    assert "<class 'str'>" not in timeline_text


@pytest.mark.parametrize("payload", XSS_PAYLOADS[:8])
def test_payload_in_uploaded_file_is_inert(payload: str) -> None:
    app = make_app([])
    bad = ('{"role": "user", "content": ' + __import__("json").dumps(payload) + ', "msg_id": "x"}\n').encode()
    with TestClient(app, base_url=BASE_URL) as client:
        token = client.get("/check").cookies["csrftoken"]
        response = client.post(
            "/check",
            files={"data": (payload + ".jsonl", bad, "application/json")},
            data={"_csrf_token": token},
        )
    assert response.status_code == 200
    assert live_content(response.text) == []
    assert html.unescape(payload) in parse(response.text).text or payload in parse(response.text).text
