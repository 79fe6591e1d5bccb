"""The payload page by windows: every window's text, concatenated, is the API's body; the first response is bounded."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from litestar import Litestar
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER
from tests.web.web_corpus import BASE_URL, long_trace, temp_store
from tests.web.web_html import every_window_url, live_content, parse
from web.app import create_app
from web.bodies.jsonview import Mark, pretty
from web.bodies.windows import plan
from web.settings import Settings

BIG = "/conversations/c-big/payload/openai"
# Long enough to span several windows, short enough that fetching every window stays cheap.
MID = "/conversations/c-mid/payload/openai"
MAX_FIRST_RESPONSE = 1_000_000
SECRET = "sk-proj-" + "A1b2C3d4" * 6


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Litestar]]:
    secret = MESSAGE_ADAPTER.validate_python(
        {"role": "user", "msg_type": "text", "msg_id": "s-u", "conversation_id": "c-s", "content": f"key {SECRET}"}
    )
    messages = [*long_trace(10_000, conversation_id="c-big"), *long_trace(1_500, conversation_id="c-mid"), secret]
    with TestClient(create_app(Settings(), temp_store(messages)), base_url=BASE_URL) as c:
        yield c


def _pre_text(html: str, element_id: str) -> str:
    """The text of the <pre> with this id (placeholders hold none: what a reader copies before scrolling)."""
    start = html.index(">", html.index(f'id="{element_id}"')) + 1
    return parse(html[start : html.index("</pre>", start)]).text


def _window_urls(html: str) -> list[str]:
    return every_window_url(html)


def _api_text(client: TestClient[Litestar], path: str) -> str:
    return json.dumps(client.get(f"/api{path}").json()["body"], indent=2, ensure_ascii=False)


def test_windows_concatenated_are_the_api_body_byte_for_byte(client: TestClient[Litestar]) -> None:
    page = client.get(MID)
    assert page.status_code == 200
    urls = _window_urls(page.text)
    assert len(urls) > 3  # the body does not fit one window
    texts = [_pre_text(page.text, "payload-json")]
    for n, url in enumerate(urls, start=1):
        fragment = client.get(url, headers={"HX-Request": "true"})
        assert fragment.status_code == 200
        element = parse(fragment.text).elements[0]
        assert (element.get("id"), element.get("data-window")) == (f"payload-json-w{n}", str(n))
        assert live_content(fragment.text) == []
        texts.append(parse(fragment.text).text)
    api = _api_text(client, MID)
    assert "".join(texts) == api
    assert all(text.endswith("\n") for text in texts[:-1])  # cut at line boundaries
    # The download and the copy button give the same bytes, streamed.
    link = next(el for el in parse(page.text).elements if el.has("data-download-json"))
    download = client.get(link.get("href") or "")
    assert download.text == api and "attachment" in download.headers["content-disposition"]
    assert "content-length" not in download.headers  # streamed, not assembled


def test_the_first_response_of_a_10000_record_trace_is_under_1_mb(client: TestClient[Litestar]) -> None:
    page = client.get(BIG)
    assert len(page.content) <= MAX_FIRST_RESPONSE, len(page.content)
    assert 'data-json-complete="false"' in page.text
    assert "Shown: the first" not in page.text  # no cut: every byte is a window away


def test_the_provenance_map_names_the_window_of_each_card(client: TestClient[Litestar]) -> None:
    html = client.get(BIG).text
    pre = next(el for el in parse(html).elements if el.get("id") == "payload-json")
    shown = json.loads(pre.get("data-windows-map") or "")
    cards = {el.get("data-hl") for el in parse(html).elements if el.has("data-msg-id")}
    assert set(shown) <= cards and len(shown) > 10  # the cards on the page, not all 10,000
    everything = client.get(pre.get("data-windows-map-url") or "").json()
    assert len(everything) == 10_001 and everything.items() >= shown.items()
    urls = _window_urls(html)
    for anchor in ("msg-r0", "msg-r5000", "msg-r9999"):
        n = everything[anchor]
        assert n > 0 or anchor == "msg-r0"
        fragment = client.get(urls[n - 1]).text if n else html
        earlier = client.get(urls[n - 2]).text if n > 1 else ""
        assert f'data-hl="{anchor}"' in fragment
        assert f'data-hl="{anchor}"' not in earlier  # the window holds the card's first line, not a later one


def test_a_secret_is_masked_in_windows_as_in_the_api(client: TestClient[Litestar]) -> None:
    path = "/conversations/c-s/payload/anthropic"
    html = client.get(path).text
    body = _pre_text(html, "payload-json")
    assert "masked" in body and SECRET not in html and SECRET not in client.get(f"{path}/body.json").text
    assert client.get(f"{path}/body.json").text == _api_text(client, path) == body


def test_a_window_past_the_end_is_a_404(client: TestClient[Litestar]) -> None:
    assert client.get(f"{BIG}/window?n=100000").status_code == 404
    assert client.get(f"{BIG}/window?n=-1").status_code == 400


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=60,
)


@settings(max_examples=150, deadline=None)
@given(value=JSON, budget=st.integers(min_value=1, max_value=2_000))
def test_any_value_cut_into_windows_gives_back_its_pretty_text(value: object, budget: int) -> None:
    layout = plan(value, budget)
    marks = {"": Mark(card="msg-root", node_id="root")}
    texts = []
    for n in range(layout.count):
        start, end = layout.span(n)
        lines = layout.render(n, marks).lines
        assert len(lines) == end - start
        for line in lines:  # each line balances its marks, so it can wrap on its own
            assert sum(t.kind == "open" for t in line.tokens) == sum(t.kind == "close" for t in line.tokens)
        texts.append("".join(t.text for line in lines for t in line.tokens))
    assert "".join(texts) == pretty(value)
    assert all(text.endswith("\n") for text in texts[:-1])
