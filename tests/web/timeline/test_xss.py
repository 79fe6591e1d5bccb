"""Hostile text in every field of every card kind renders as text and runs nothing (security.md §1a)."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from urllib.parse import quote, urlsplit

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core.providers import dialect_names
from tests.web.web_corpus import BASE_URL, XSS_PAYLOADS, csrf_cookie, every_kind, make_app
from tests.web.web_html import live_content, parse
from web import urls
from web.imports.service import upload_name
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


def _cid(payload: str) -> str:
    # A "/" in a conversation id cannot be routed (ASGI decodes %2F before routing), so it is swapped out there.
    return payload.replace("/", "|")


@pytest.fixture(scope="module")
def corpus_client() -> Iterator[TestClient[Litestar]]:
    """One app over every payload's conversation (its id is the payload): each case reads its own conversation's
    pages, and the list and search pages, which hold them all."""
    messages = [m for payload in XSS_PAYLOADS for m in every_kind(payload, conversation_id=_cid(payload))]
    with TestClient(make_app(messages), base_url=BASE_URL) as client:
        yield client


def _list_titles(html_text: str) -> dict[str, str]:
    """Each conversation's title on the list, by the path its title links to."""
    rows = re.findall(r'<a href="([^"]*)" data-nav-item>([^<]*)</a>', html_text)
    return {urlsplit(html.unescape(href)).path: html.unescape(title) for href, title in rows}


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_payload_is_inert_on_every_page(corpus_client: TestClient[Litestar], payload: str) -> None:
    cid = _cid(payload)
    base = f"/conversations/{quote(cid, safe='')}"
    client = corpus_client
    pages = {
        "list": client.get("/"),
        "search": client.get(f"/?q={quote(payload, safe='')}&damaged=1"),
        "timeline": client.get(base),
        "fragment": client.get(f"{base}?offset=3", headers={"HX-Request": "true"}),
        "404": client.get(f"/nothing/{quote(payload, safe='')}"),
        "missing conversation": client.get(f"/conversations/{quote(cid + 'x', safe='')}"),
        "contract error": client.get(f"{base}/payload/openai"),
        "phases": client.get(f"{base}/payload/anthropic/phases?repair=1", headers={"HX-Request": "true"}),
        "diff": client.get(f"{base}/diff?left=openai&right=anthropic&repair=1"),
        "diff 2": client.get(f"{base}/diff?left=gemini&right=openai-responses&repair=1"),
        "bad upto": client.get(f"{base}/payload/openai?upto={quote(payload, safe='')}"),
        **{f"payload {p}": client.get(f"{base}/payload/{p}?repair=1") for p in dialect_names()},
    }
    for name in ("timeline", "fragment", "contract error", "phases", "diff", "diff 2"):
        assert pages[name].status_code == 200, name
    for name, response in pages.items():
        assert response.status_code in (200, 404), name
        problems = live_content(response.text)
        assert problems == [], f"{name}: {problems}"
    for p in dialect_names():
        assert pages[f"payload {p}"].status_code == 200
        assert parse(pages[f"payload {p}"].text).text.count(payload) >= 10, p  # the cards beside the body
    # In the bodies the payload is a JSON string: shown escaped as JSON, as text.
    as_json = json.dumps(payload, ensure_ascii=False)[1:-1]
    assert as_json in parse(pages["diff"].text).text
    assert as_json in parse(pages["payload anthropic"].text).text
    # The payload is shown, literally, as text: in the timeline (many times) and on the list (as the title).
    timeline_text = parse(pages["timeline"].text).text
    assert timeline_text.count(payload) >= 20
    assert " ".join(payload.split())[:60] in _list_titles(pages["list"].text)[urls.conversation(cid)]
    # Jinja syntax in data is data: the template engine never evaluated it.
    assert "<class 'str'>" not in timeline_text


@pytest.fixture(scope="module")
def empty_client() -> Iterator[TestClient[Litestar]]:
    """An app over a store that starts empty, shared by the upload cases: each imports a conversation of its own
    (its id is the payload's place in the corpus) or stores nothing (the check form)."""
    with TestClient(make_app([]), base_url=BASE_URL) as client:
        client.get("/import")
        yield client


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_payload_in_an_imported_file_is_inert(empty_client: TestClient[Litestar], payload: str) -> None:
    cid = f"c-every-{XSS_PAYLOADS.index(payload)}"
    line = json.dumps(every_kind(payload, conversation_id=cid)[0].model_dump(mode="json")).encode() + b"\n"
    bad = ('{"role": "user", "content": 1, "msg_id": ' + json.dumps(payload) + "}\n").encode()
    token = csrf_cookie(empty_client.cookies)
    files = [("files", (payload + ".jsonl", line)), ("files", (payload + "-bad.jsonl", bad))]
    response = empty_client.post("/import", files=files, data={"_csrf_token": token})
    assert response.status_code == 400  # the second file is bad; the first imported
    assert live_content(response.text) == []
    text = " ".join(parse(response.text).text.split())
    # The names are shown as the store keeps them (their last path component), as text.
    if payload.isprintable():  # (the HTTP client itself drops a tab from a file name)
        assert " ".join(upload_name(payload + ".jsonl").split()) in text
    assert "(nothing from this file was stored)" in text


@pytest.mark.parametrize("payload", XSS_PAYLOADS[:8])
def test_payload_in_uploaded_file_is_inert(empty_client: TestClient[Litestar], payload: str) -> None:
    bad = ('{"role": "user", "content": ' + json.dumps(payload) + ', "msg_id": "x"}\n').encode()
    assert empty_client.get("/check").status_code == 200
    token = csrf_cookie(empty_client.cookies)
    response = empty_client.post(
        "/check",
        files={"data": (payload + ".jsonl", bad, "application/json")},
        data={"_csrf_token": token},
    )
    assert response.status_code == 200
    assert live_content(response.text) == []
    assert html.unescape(payload) in parse(response.text).text or payload in parse(response.text).text
