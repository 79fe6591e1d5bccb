"""How pages look in Chromium: long JSON lines wrap under their indentation; a dark system theme is followed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core import MESSAGE_ADAPTER
from tests.replay.web_server import serving
from tests.web.test_browser import Visit, Watch, _shot, browser, page, visit  # noqa: F401 - fixtures
from tests.web.web_corpus import every_kind, temp_store
from web.app import create_app
from web.bodies.jsonview import Mark, lines, pretty, render
from web.settings import Settings

pytestmark = pytest.mark.browser

LONG = " ".join(f"word{i}" for i in range(400))  # one JSON string of some 3,500 characters


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    long_user = MESSAGE_ADAPTER.validate_python(
        {"role": "user", "msg_type": "text", "msg_id": "long-u", "conversation_id": "c-wide", "content": LONG}
    )
    app = create_app(Settings(), temp_store([*every_kind("plain"), long_user]))
    with serving(app) as base_url:
        yield base_url


def test_json_lines_keep_the_text_and_balance_their_marks() -> None:
    value = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "n": 1}
    marks = {"/messages/0": Mark(card="msg-a", node_id="L1"), "/messages/0/content/0": Mark(card="msg-b")}
    rendered = render(value, marks)
    split = lines(rendered)
    assert "".join(t.text for line in split for t in line.tokens) == pretty(value)
    assert [line.depth for line in split] == [0, 1, 2, 3, 3, 4, 5, 5, 4, 3, 2, 1, 1, 0]
    for line in split:
        opened = sum(t.kind == "open" for t in line.tokens)
        assert opened == sum(t.kind == "close" for t in line.tokens)
    ids = [t.mark.node_id for line in split for t in line.tokens if t.kind == "open" and t.mark and t.mark.node_id]
    assert ids == ["L1"]  # an element id stays unique however many lines its node spans


def test_a_long_json_line_wraps_under_its_indentation(visit: Visit) -> None:  # noqa: F811
    pg, watch = visit("/conversations/c-wide/payload/anthropic")
    string = pg.locator("#payload-json .js", has_text="word399").first  # type: ignore[attr-defined]
    string.scroll_into_view_if_needed()
    rects = string.evaluate("el => [...el.getClientRects()].map(r => r.left)")
    assert len(rects) > 3  # it wraps
    # The key that starts the line (the string's previous element), at the line's indentation.
    key = string.evaluate("el => el.previousElementSibling.getBoundingClientRect().left")
    margin = pg.evaluate("document.querySelector('#payload-json').getBoundingClientRect().left")  # type: ignore[attr-defined]
    assert key > margin + 20  # the line is indented
    assert all(left >= key for left in rects[1:]), (key, rects[:4])
    _shot(pg, "json-wrap.png")
    assert watch.clean(), watch


def test_a_dark_system_theme_gives_a_dark_page(browser: object, base_url: str) -> None:  # noqa: F811
    context = browser.new_context(color_scheme="dark", viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    try:
        pg = context.new_page()
        for path, name in (("/conversations/c-every", "dark-timeline.png"), ("/", "dark-list.png")):
            pg.goto(base_url + path)
            luminance = pg.evaluate(
                """() => [document.body, document.querySelector('main .card, main table')].map(el => {
                     const [r, g, b] = getComputedStyle(el).backgroundColor.match(/\\d+/g).map(Number);
                     return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255; })"""
            )
            text = pg.evaluate(
                """() => { const [r, g, b] = getComputedStyle(document.body).color.match(/\\d+/g).map(Number);
                           return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255; }"""
            )
            assert all(value < 0.25 for value in luminance), (path, luminance)
            assert text > 0.7, (path, text)
            _shot(pg, name)
    finally:
        context.close()
