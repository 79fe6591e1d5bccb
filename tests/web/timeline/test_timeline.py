"""The timeline: one card per message and record, in order, one partial per kind, paged by htmx."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER, MESSAGE_TAGS, Message
from tests.web.web_corpus import BASE_URL, every_kind, long_trace, make_app, temp_store
from tests.web.web_html import Element, parse
from web.app import create_app
from web.settings import Settings
from web.source import StoreSource
from web.timeline import CARD_KINDS, Timeline
from web.timeline.cards import AssistantBody, HistoryBody, MediaBody, ResultsBody
from web.timeline.damage import inspect_record


def _msg(**fields: Any) -> Message:
    return MESSAGE_ADAPTER.validate_python({"conversation_id": "c", **fields})


def _cards(html: str) -> list[Element]:
    return [el for el in parse(html).elements if el.tag == "article" and el.get("data-msg-id") is not None]


# --- conventions ---------------------------------------------------------------------------------


def test_every_card_kind_has_a_partial() -> None:
    folder = Path(Settings().templates_dir) / "timeline" / "cards"
    partials = {p.name.removeprefix("_").removesuffix(".html") for p in folder.glob("_*.html")}
    assert partials == set(CARD_KINDS)


def test_every_message_class_maps_to_a_card_kind() -> None:
    """Each subclass, each base role and each damaged role lands on a named kind (a new class fails here)."""
    assert len(MESSAGE_TAGS) == 10  # nine user classes and AssistantTextMessage: a new one needs a kind
    kinds = {card.kind for card in Timeline(every_kind("x")).page(0, 1000).cards}
    history = next(c for c in Timeline(every_kind("x")).page(0, 1000).cards if c.kind == "user-history")
    assert isinstance(history.body, HistoryBody)
    kinds |= {c.kind for c in history.body.cards}
    assert kinds == set(CARD_KINDS)


# --- order ---------------------------------------------------------------------------------------


def test_records_placed_before_and_after_their_user_message() -> None:
    user = _msg(
        role="user",
        msg_type="text",
        msg_id="u",
        create_ts=100,
        content="question",
        intermediate_trace={
            "records": [
                {"role": "tool", "msg_id": "late", "create_ts": 300, "content": "r"},
                {"role": "system", "msg_id": "early", "create_ts": 50, "content": "s"},
                {"role": "assistant", "msg_type": "text", "msg_id": "same", "create_ts": 100, "content": "a"},
                {"role": "assistant", "msg_type": "text", "msg_id": "mid", "create_ts": 200, "content": "b"},
                {"role": "system", "msg_id": "earliest", "create_ts": 10, "content": "s0"},
            ]
        },
    )
    other = _msg(role="user", msg_type="text", msg_id="u2", create_ts=150, content="second")
    store = temp_store([other, user])  # out of order on purpose
    cards = Timeline(store.get_conversation("c").typed).page(0, 100).cards
    assert [c.msg_id for c in cards] == ["earliest", "early", "u", "same", "mid", "late", "u2"]
    assert [c.placement for c in cards] == ["before", "before", "message", "after", "after", "after", "message"]
    assert cards[0].parent_anchor == "msg-u"


def test_equal_timestamps_keep_file_order() -> None:
    msgs = [_msg(role="system", msg_id=f"s{i}", create_ts=5, content=str(i)) for i in range(5)]
    assert [c.msg_id for c in Timeline(temp_store(msgs).get_conversation("c").typed).page(0, 9).cards] == [
        f"s{i}" for i in range(5)
    ]


# --- card contents -------------------------------------------------------------------------------


def test_damaged_record_explains_itself(client: TestClient[Litestar]) -> None:
    html = client.get("/conversations/c-every").text
    damaged = [el for el in _cards(html) if el.get("data-integrity") == "type-lost"]
    assert {el.get("data-kind") for el in damaged} == {"assistant-text", "user-text", "user-multipart"}
    text = " ".join(parse(html).text.split())
    assert (
        "Type lost on the JSON round trip (TFROB-299). This assistant record was stored as a bare BaseMessage." in text
    )
    assert "msg_type, reasoning_content (not recoverable)" in text
    assert "core.errors.ContractError: 助理消息需要子类实现转换过程 (msg_id=m9-plain text, role=assistant)" in text
    assert "read as AssistantTextMessage (certain: assistant messages have one subclass)" in text
    assert "msg_type, intermediate_trace (not recoverable)" in text


def test_inspect_record_only_flags_bare_user_and_assistant() -> None:
    assert inspect_record(_msg(role="system", content="x")) is None
    assert inspect_record(_msg(role="tool", content="x")) is None
    assert inspect_record(_msg(role="user", msg_type="text", content="x")) is None
    damage = inspect_record(_msg(role="user", content={"uid": "7", "name": "Ann"}, msg_id="d"))
    assert damage is not None and damage.inferred == "ContactMessage"
    damage = inspect_record(_msg(role="user", content=[{"role": "user", "content": "x"}]))
    assert damage is not None and damage.inferred == "HistoryMessage"


@pytest.mark.parametrize(
    ("content", "kind", "repair"),
    [
        ("hello", "user-text", "TextMessage"),
        ("uploads/cat.png", "user-image", "ImageMessage"),
        ("https://example.com/talk.mp3", "user-audio", "AudioMessage"),
        ("https://example.com/page", "user-url", "UrlMessage"),
        ("javascript:alert(1)", "user-url", "UrlMessage"),
        ({"uid": "7", "name": "Ann"}, "user-contact", "ContactMessage"),
        ([{"type": "text", "text": "hi"}], "user-multipart", "MultiPartMessage"),
        ([{"role": "user", "msg_type": "text", "content": "x"}], "user-history", "HistoryMessage"),
    ],
)
def test_damaged_user_record_shown_as_its_repair(content: object, kind: str, repair: str) -> None:
    card = Timeline([_msg(role="user", content=content, msg_id="d")]).page(0, 1).cards[0]
    assert card.damage is not None and card.damage.inferred == repair
    assert card.kind == kind
    if kind in ("user-image", "user-audio", "user-url"):
        assert isinstance(card.body, MediaBody)
        assert card.body.location.href is None or card.body.location.href.startswith("https://")


def test_tool_call_and_result_link_both_ways(client: TestClient[Litestar]) -> None:
    page = parse(client.get("/conversations/c-every").text)
    ids = {el.get("id") for el in page.elements if el.get("id")}
    to_result = [el for el in page.elements if el.has("data-jump-result")]
    to_call = [el for el in page.elements if el.has("data-jump-call")]
    assert len(to_result) == 2 and len(to_call) == 2
    for link in to_result + to_call:
        assert (link.get("href") or "")[1:] in ids
    # A call's result link lands on the result element, whose call link lands back on the call.
    first = to_result[0].get("href")
    result = next(el for el in page.elements if el.get("id") == (first or "")[1:])
    assert result.get("data-tool-result") == "call-plain text"
    assert result.get("data-is-error") == "true"


def test_tool_arguments_pretty_or_flagged() -> None:
    cards = Timeline(every_kind("x")).page(0, 100).cards
    body = next(c.body for c in cards if c.msg_id == "m4-x")
    assert isinstance(body, AssistantBody)
    good, bad = body.tool_calls
    assert good.valid_json and good.arguments == '{"q": "x"}'
    assert not bad.valid_json and bad.arguments == "x{not json"
    assert [b.status for b in body.reasoning_blocks] == ["signed", "unsigned", "redacted"]
    tool = next(c.body for c in cards if c.kind == "tool")
    assert isinstance(tool, ResultsBody) and tool.results[0].is_error and len(tool.results[0].attachments) == 6


def test_long_arguments_are_indented() -> None:
    from web.timeline.build import pretty_arguments

    long = json.dumps({"query": "x" * 120, "limit": 5})
    text, valid = pretty_arguments(long)
    assert valid and text.startswith('{\n  "query": "') and text.endswith('\n  "limit": 5\n}')
    assert pretty_arguments("") == ("", True)
    assert pretty_arguments("[1, 2") == ("[1, 2", False)


def test_script_only_assistant_is_a_tfl_card(client: TestClient[Litestar]) -> None:
    html = client.get("/conversations/c-every").text
    tfl = next(el for el in _cards(html) if el.get("data-kind") == "tfl")
    assert tfl.get("data-msg-id") == "m7-plain text"
    assert html.count("data-tfl-script") == 2


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://cdn.example/cat.png", "remote"),
        ("javascript:alert(1)", "inert"),
        ("JaVaScRiPt:alert(1)", "inert"),
        ("vbscript:x", "inert"),
        ("file:///etc/passwd", "inert"),
        ("data:text/html,<script>alert(1)</script>", "data"),
        ("uploads/cat.png", "path"),
    ],
)
def test_locations_are_never_live_unless_http(url: str, kind: str) -> None:
    msg = _msg(role="user", msg_type="image", content=url, msg_id="i")
    card = Timeline([msg]).page(0, 1).cards[0]
    assert isinstance(card.body, MediaBody)
    assert card.body.location.kind == kind
    assert (card.body.location.href is not None) == (kind == "remote")
    with TestClient(make_app([msg]), base_url=BASE_URL) as client:
        page = parse(client.get("/conversations/c").text)
    hrefs = [el.get("href") for el in page.elements if el.tag == "a"]
    srcs = [el.get("src") for el in page.elements if el.get("src")]
    assert url in page.text
    assert (url in hrefs) == (kind == "remote")
    assert url not in srcs  # nothing from the trace is loaded when the page opens
    assert not any(el.tag == "img" for el in page.elements)


def test_small_inline_image_shown_only_on_click() -> None:
    msg = _msg(role="user", msg_type="image", content="data:image/png;base64,iVBORw0KGgo=", msg_id="i")
    with TestClient(make_app([msg]), base_url=BASE_URL) as client:
        page = parse(client.get("/conversations/c").text)
    button = next(el for el in page.elements if el.has("data-show-inline"))
    assert button.tag == "button" and button.get("data-src") == "data:image/png;base64,iVBORw0KGgo="


def test_permalink_anchor_on_every_card(client: TestClient[Litestar]) -> None:
    page = parse(client.get("/conversations/c-every").text)
    permalinks = {el.get("href") for el in page.elements if el.get("class") == "card__permalink"}
    cards = [el for el in page.elements if el.tag == "article"]
    assert len(cards) == 26  # 20 timeline cards and 6 inside the history (one is a nested trace record)
    for card in cards:
        msg_id = card.get("data-msg-id") or ""
        # Plain ids are their own permalink; others (here: with a space) get a stable hashed one.
        expected = f"msg-{msg_id}" if " " not in msg_id else "msg-h"
        assert (card.get("id") or "").startswith(expected)
        assert card.get("data-kind") in CARD_KINDS
        assert f"#{card.get('id')}" in permalinks


# --- paging --------------------------------------------------------------------------------------


def test_first_page_holds_first_hundred_cards_in_full(client: TestClient[Litestar]) -> None:
    html = client.get("/conversations/c-long").text
    cards = _cards(html)
    assert len(cards) == 100
    assert [c.get("data-msg-id") for c in cards[:3]] == ["u0", "r0", "r1"]
    assert "result 97" in html  # the 100th card (r98 is card 100: u0 + r0..r98) is there in full
    more = next(el for el in parse(html).elements if el.get("data-next-page") is not None)
    assert more.get("href") == more.get("hx-get") == "/conversations/c-long?offset=100"
    assert more.get("hx-trigger") == "revealed"


def test_next_page_is_a_fragment_for_htmx_and_a_page_without_it(client: TestClient[Litestar]) -> None:
    fragment = client.get("/conversations/c-long?offset=100", headers={"HX-Request": "true"}).text
    assert "<html" not in fragment
    cards = _cards(fragment)
    assert [c.get("data-msg-id") for c in cards][:2] == ["r99", "r100"] and len(cards) == 100
    last = client.get("/conversations/c-long?offset=200", headers={"HX-Request": "true"}).text
    assert len(_cards(last)) == 51 and "data-timeline-end" in last
    full = client.get("/conversations/c-long?offset=100").text  # the no-JavaScript fallback
    assert "<html" in full and len(_cards(full)) == 100 and "previous cards" in full


def test_through_loads_up_to_a_later_card(client: TestClient[Litestar]) -> None:
    fragment = client.get("/conversations/c-long?offset=100&through=msg-r230", headers={"HX-Request": "true"}).text
    ids = [c.get("data-msg-id") for c in _cards(fragment)]
    assert ids[0] == "r99" and "r230" in ids and len(ids) == 151


def test_far_jump_opens_the_cards_own_page() -> None:
    app = make_app(long_trace(2500, conversation_id="c"))
    with TestClient(app, base_url=BASE_URL) as client:
        near = client.get("/conversations/c?offset=100&through=msg-r900", headers={"HX-Request": "true"}).text
        far = client.get("/conversations/c?offset=100&through=msg-r2000", headers={"HX-Request": "true"}).text
        page = client.get("/conversations/c?at=msg-r2000").text
    assert len(_cards(near)) == 900  # r99 .. r998: whole pages up to the one holding r900
    assert len(_cards(far)) == 100  # bounded: 1,900 cards ahead is too far for one response
    ids = [c.get("data-msg-id") for c in _cards(page)]
    assert ids[0] == "r1999" and "r2000" in ids and len(ids) == 100  # the page [2000, 2100) holds it
    assert "previous cards" in page


def test_tool_links_cross_pages(client: TestClient[Litestar]) -> None:
    html = client.get("/conversations/c-long").text
    link = next(el for el in parse(html).elements if el.has("data-jump-result") and el.get("data-card") == "msg-r99")
    assert link.get("href") == "#result-r99-call98"
    assert link.get("data-card") == "msg-r99"  # on the next page: the script loads through it


def _first_response(records: int) -> tuple[int, float]:
    app = make_app(long_trace(records, conversation_id="c"))
    with TestClient(app, base_url=BASE_URL) as client:
        client.get("/conversations/c")  # warm up templates
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            size = len(client.get("/conversations/c").content)
            best = min(best, time.perf_counter() - start)
    return size, best


def test_first_response_does_not_grow_with_the_trace() -> None:
    small_bytes, small_time = _first_response(100)
    big_bytes, big_time = _first_response(10_000)
    print(
        f"first response: 100 records {small_bytes:,} B {small_time * 1000:.1f} ms; "
        f"10,000 records {big_bytes:,} B {big_time * 1000:.1f} ms"
    )
    assert big_bytes <= 2 * small_bytes
    assert big_bytes < 1_000_000  # times are figures (bench/bench_web.py), never asserted


def test_store_figures_of_a_stored_conversation() -> None:
    store = temp_store(every_kind("x", conversation_id="a"))
    summary = StoreSource(store).summary("a")
    # Records and damaged records count every nested message, forwarded histories included.
    assert (summary.messages, summary.turns, summary.records, summary.damaged, summary.title) == (11, 11, 15, 3, "x")
    with TestClient(create_app(Settings(), store), base_url=BASE_URL) as client:
        assert client.get("/conversations/a").status_code == 200


def test_history_is_collapsible_with_its_own_traces(client: TestClient[Litestar]) -> None:
    page = parse(client.get("/conversations/c-every").text)
    history = next(i for i, el in enumerate(page.elements) if el.get("data-kind") == "user-history")
    details = page.elements[history + 1 :]
    assert next(el for el in details if el.tag == "details").has("data-history")
    nested = [el for el in details if el.tag == "article"][:6]
    assert [(el.get("data-kind"), el.get("data-placement")) for el in nested] == [
        ("user-text", "nested"),
        ("assistant-text", "nested"),
        ("user-image", "nested"),
        ("user-multipart", "nested"),
        ("user-text", "nested"),
        ("assistant-text", "after"),  # the nested message's own trace record
    ]
    assert nested[3].get("data-integrity") == "type-lost"


def test_huge_fields_are_clipped_and_say_so() -> None:
    huge = "A" * 3_000_000
    msgs = [
        _msg(
            role="user",
            msg_type="text",
            msg_id="u",
            create_ts=1,
            content=huge,
            intermediate_trace={
                "records": [
                    {"role": "tool", "msg_id": "t", "create_ts": 2, "tool_reses": [{"call_id": "c", "result": huge}]},
                    {
                        "role": "user",
                        "msg_type": "image",
                        "msg_id": "i",
                        "create_ts": 3,
                        "content": "https://x/" + huge,
                    },
                ]
            },
        )
    ]
    with TestClient(make_app(msgs), base_url=BASE_URL) as client:
        response = client.get("/conversations/c")
    assert response.status_code == 200
    assert len(response.content) < 200_000
    assert response.text.count("2,980,000 more characters not shown; 3,000,000 in all") == 2
    assert 'href="https://x/' not in response.text  # a 3 MB "URL" is text, not a link
