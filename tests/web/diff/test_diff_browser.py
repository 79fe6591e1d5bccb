"""The diff page in Chromium: the summary lists every cause in the page's own flow, with no box of its own to scroll."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core import MESSAGE_ADAPTER
from tests.replay.web_server import serving
from tests.web.test_browser import Visit, Watch, _shot, browser, page, visit  # noqa: F401 - fixtures
from tests.web.web_corpus import temp_store
from web.app import create_app
from web.devtools import demo_data
from web.settings import Settings

pytestmark = pytest.mark.browser

# Elements that scroll on their own: content taller than the box, and a style that scrolls it.
SCROLLERS = """(root) => [root, ...root.querySelectorAll('*')].filter(el => {
    const s = getComputedStyle(el);
    return ['auto', 'scroll'].includes(s.overflowY) && el.scrollHeight > el.clientHeight + 1;
  }).map(el => el.tagName + '.' + el.className)"""


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.every_kind()]
    with serving(create_app(Settings(), temp_store(messages))) as base_url:
        yield base_url


def test_the_diff_summary_shows_every_cause_without_a_scroll_of_its_own(visit: Visit) -> None:  # noqa: F811
    pg, watch = visit(f"/conversations/{demo_data.EVERY_KIND}/diff?left=openai&right=anthropic")
    summary = pg.locator("[data-diff-summary]")
    causes = pg.locator("[data-diff-summary] [data-cause]")
    assert causes.count() >= 4
    assert summary.evaluate(SCROLLERS) == []
    for i in range(causes.count()):  # each cause's title and each listed change, in the page's flow
        assert causes.nth(i).locator("summary").is_visible()
    listed = sum(int(causes.nth(i).get_attribute("data-changes") or 0) for i in range(causes.count()))
    assert listed == int(pg.get_attribute("[data-differences]", "data-differences"))
    _shot(pg, "diff-summary.png", full=True)
    assert watch.clean(), watch
