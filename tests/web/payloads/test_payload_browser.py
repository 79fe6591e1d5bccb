"""The payload page in Chromium: the degradations said once, and the "diff with" row wrapping between its links."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core import MESSAGE_ADAPTER
from tests.replay.web_server import serving
from tests.web.test_browser import ARTIFACTS, Visit, Watch, _shot, browser, page, visit  # noqa: F401 - fixtures
from tests.web.web_corpus import temp_store
from web.app import create_app
from web.devtools import demo_data
from web.settings import Settings

pytestmark = pytest.mark.browser

PAYLOAD = f"/conversations/{demo_data.EVERY_KIND}/payload/anthropic"
# Separators ("·") in the toolbar that begin a line: no other character of the toolbar on the same line before them.
LEADING_DOTS = """(root) => {
    const chars = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.data.length; i++) {
        if (!node.data[i].trim()) continue;
        const range = document.createRange(); range.setStart(node, i); range.setEnd(node, i + 1);
        const r = range.getBoundingClientRect();
        if (r.width) chars.push({c: node.data[i], r});
      }
    }
    return chars.filter(d => d.c === '·' && !chars.some(o => o.c !== '·' && o.r.right <= d.r.left + 1 &&
      o.r.top < d.r.bottom && o.r.bottom > d.r.top)).length;
  }"""


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.every_kind()]
    with serving(create_app(Settings(), temp_store(messages))) as base_url:
        yield base_url


def test_the_payload_page_says_each_degradation_once(visit: Visit) -> None:  # noqa: F811
    pg, watch = visit(PAYLOAD)
    text = pg.inner_text("main")
    for said in ("Anthropic takes no audio; sent as text", "Anthropic takes no video; sent as text"):
        assert text.count(said) == 1, said
    assert pg.locator("#payload-warnings [data-warning]").count() >= 4  # type: ignore[attr-defined]
    _shot(pg, "payload-degradations.png")
    assert watch.clean(), watch


def test_the_diff_with_row_never_starts_a_line_with_a_separator(visit: Visit) -> None:  # noqa: F811
    pg, watch = visit(PAYLOAD)
    toolbar = pg.locator("#payload-panel .toolbar")
    assert toolbar.locator("[data-diff-with]").count() == 5
    # Where the row wraps depends on the width: every width from a narrow window to a wide one.
    starting = [w for w in range(600, 1700, 10) if pg.set_viewport_size({"width": w, "height": 900}) or
                toolbar.evaluate(LEADING_DOTS)]  # fmt: skip
    assert starting == []
    pg.set_viewport_size({"width": 1250, "height": 900})
    toolbar.screenshot(path=str(ARTIFACTS / "payload-diff-with.png"))
    assert watch.clean(), watch
