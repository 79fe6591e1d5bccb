"""Every stored id is reachable: conversation and message ids travel in paths through one encoding (web.urls)."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st
from litestar import Litestar
from litestar.exceptions import NotFoundException
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER, Message
from tests.web.web_corpus import BASE_URL, make_app
from tests.web.web_html import parse
from web import urls

HOSTILE_IDS = (
    "a/b?c=d#e",
    "%2F",
    "..",
    ".",
    "a b  c",
    "\u200fRTL\u200e-mark\u202e",
    "https://example.com/x?y=1#z",
    "~7E~zz",
    "../../etc/passwd",
)


@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")))
def test_segment_round_trips_any_string_an_id_can_be(value: str) -> None:
    encoded = urls.segment(value)
    assert urls.from_segment(encoded) == value
    assert re.fullmatch(r"[A-Za-z0-9._~-]*", encoded)  # only characters no server or browser rewrites
    assert not encoded.startswith(".")  # never a dot segment a browser would resolve


@pytest.mark.parametrize("value", ["\ud800", "a\udfffb", "\x00", "id\x00"])
def test_a_segment_of_a_lone_surrogate_or_nul_names_nothing(value: str) -> None:
    with pytest.raises(NotFoundException):
        urls.from_segment(urls.segment(value))


def test_plain_ids_read_as_themselves() -> None:
    assert urls.conversation("demo-email") == "/conversations/demo-email"
    assert urls.segment("v1.2_x") == "v1.2_x"


def _conversation(cid: str) -> list[Message]:
    def msg(**fields: Any) -> Message:
        return MESSAGE_ADAPTER.validate_python({"conversation_id": cid, **fields})

    call = {"id": "c1", "name": "look", "arguments": "{}"}
    return [
        msg(role="user", msg_type="text", msg_id=f"{cid}|u", create_ts=1, content="question"),
        msg(role="assistant", msg_type="text", msg_id=f"{cid}|a", create_ts=2, content="", tool_calls=[call]),
        msg(role="tool", msg_id=f"{cid}|t", create_ts=3, tool_reses=[{"call_id": "c1", "result": "found"}]),
        msg(role="assistant", msg_type="text", msg_id=f"{cid}|b", create_ts=4, content="answer"),
    ]


@pytest.fixture(scope="module")
def hostile_client() -> Any:
    messages = [m for cid in HOSTILE_IDS for m in _conversation(cid)]
    app: Litestar = make_app(messages)
    with TestClient(app, base_url=BASE_URL) as client:
        yield client


@pytest.fixture(scope="module")
def get(hostile_client: Any) -> Callable[[str], Any]:
    """A GET of the hostile app, each URL asked once for the module: the app is only read, and the pages of one id
    link the same pages many times (every id's test opens the whole list to find its own)."""
    return cache(hostile_client.get)


def _links(html: str) -> list[str]:
    page = parse(html)
    found = [el.get("href") or el.get("action") or "" for el in page.elements if el.tag in ("a", "form")]
    found = [
        f
        for f, el in zip(found, [e for e in page.elements if e.tag in ("a", "form")], strict=True)
        if el.get("method") != "post"
    ]
    return [link for link in found if link.startswith("/") and not link.startswith(("/static", "/schema"))]


@pytest.mark.parametrize("cid", HOSTILE_IDS)
def test_every_page_of_a_hostile_id_is_reachable_from_the_list(get: Callable[[str], Any], cid: str) -> None:
    index = parse(get("/").text)
    titles = [el for el in index.elements if el.tag == "a" and el.has("data-nav-item")]
    assert len(titles) == len(HOSTILE_IDS)
    # The list links each conversation; follow the one whose page names this id.
    pages = [get(el.get("href") or "") for el in titles]
    mine = [r for r in pages if _names(r.text, cid)]
    assert len(mine) == 1, [r.status_code for r in pages]
    links = set(_links(mine[0].text))
    assert any("/payload/" in link and "upto=" in link for link in links), "a reply links its request"
    assert any(urlsplit(link).path.endswith("/diff") for link in links)
    for link in sorted(links):
        response = get(link)
        assert response.status_code == 200, (link, response.status_code)
        if "text/html" in response.headers["content-type"]:
            for inner in _links(response.text):
                if inner.startswith(("/conversations/", "/api/")):
                    assert get(inner).status_code == 200, inner


def _names(html: str, cid: str) -> bool:
    header = [el for el in parse(html).elements if el.has("data-conversation")]
    return bool(header) and header[0].get("data-conversation") == cid


@pytest.mark.parametrize("cid", HOSTILE_IDS)
def test_the_api_answers_for_a_hostile_id(hostile_client: Any, cid: str) -> None:
    listed = hostile_client.get("/api/conversations", params={"limit": 50}).json()["conversations"]
    assert cid in [c["conversation_id"] for c in listed]
    base = urls.api_conversation(cid)
    body = hostile_client.get(base).json()
    assert body["conversation_id"] == cid
    assert [m["msg_id"] for m in body["messages"]] == [f"{cid}|u", f"{cid}|a", f"{cid}|t", f"{cid}|b"]
    payload = hostile_client.get(urls.api_payload(cid, "openai", upto=f"{cid}|b"))
    assert payload.status_code == 200 and payload.json()["upto"] == f"{cid}|b"
    assert hostile_client.get(urls.api_diff(cid, "openai", "anthropic")).status_code == 200
    assert hostile_client.get(urls.api_runs(cid)).json()["runs"] == []
    field = hostile_client.get(urls.api_record_field(cid, f"{cid}|t", "/tool_reses/0/result"))
    assert field.status_code == 200 and field.json()["text"] == "found"
    assert hostile_client.get(urls.record_field(cid, f"{cid}|t", "/tool_reses/0/result")).status_code == 200


@pytest.mark.parametrize("cid", HOSTILE_IDS)
def test_a_permalink_to_a_hostile_msg_id_opens_its_card(hostile_client: Any, cid: str) -> None:
    from web.timeline import msg_anchor

    anchor = msg_anchor(f"{cid}|b")
    response = hostile_client.get(urls.conversation(cid), params={"at": anchor})
    cards = [el for el in parse(response.text).elements if el.tag == "article" and el.get("id") == anchor]
    assert response.status_code == 200 and cards and cards[0].get("data-msg-id") == f"{cid}|b"


def test_a_malformed_escape_is_a_404(hostile_client: Any) -> None:
    assert hostile_client.get("/conversations/a~zz").status_code == 404
    assert hostile_client.get("/conversations/~FF").status_code == 404  # not UTF-8
