"""A long trace's payload page in Chromium before its digest is made: the panel shows at once, fills in place, and
the page opens by itself from the digest."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.replay.web_server import serving
from tests.web.test_browser import Watch, _shot, browser, page  # noqa: F401 - fixtures
from tests.web.web_corpus import long_trace, temp_store
from web.app import create_app
from web.settings import Settings

pytestmark = pytest.mark.browser
PlaywrightError = pytest.importorskip("playwright.sync_api").Error

PAYLOAD = "/conversations/c-prep/payload/openai"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    settings = Settings(prepare_min_records=200)
    with serving(create_app(settings, temp_store(long_trace(400, conversation_id="c-prep")))) as base_url:
        yield base_url


def _percent(pg: object) -> int | None:
    """The panel's percentage, None when there is no panel (or the page is reloading into the prepared page)."""
    try:
        found = pg.eval_on_selector_all("#digest-preparing", "els => els.map(e => e.dataset.percent)")  # type: ignore[attr-defined]
    except PlaywrightError:
        return None
    return int(found[0]) if found else None


def _opened(pg: object) -> bool:
    try:
        return bool(pg.eval_on_selector_all("#payload-json", "els => els.length"))  # type: ignore[attr-defined]
    except PlaywrightError:
        return False


def test_the_panel_fills_in_place_then_the_page_opens_from_the_digest(
    page: tuple[object, Watch],  # noqa: F811 - the fixture imported above
    base_url: str,
) -> None:
    pg, watch = page
    pg.goto(f"{base_url}{PAYLOAD}")  # type: ignore[attr-defined]
    panel = pg.locator("#digest-preparing")  # type: ignore[attr-defined]
    assert panel.is_visible()
    seen: list[int] = []
    deadline = time.monotonic() + 120
    while not _opened(pg):
        assert time.monotonic() < deadline, f"the page did not open; percentages seen: {seen}"
        percent = _percent(pg)
        if percent is not None and (not seen or seen[-1] != percent):
            seen.append(percent)
        time.sleep(0.05)
    assert seen and seen == sorted(seen), seen  # the panel only ever fills
    assert pg.locator("#digest-preparing").count() == 0  # type: ignore[attr-defined]
    assert pg.locator("#payload-json [data-window]").count() > 0  # type: ignore[attr-defined]
    _shot(pg, "payload-prepared.png")
    assert watch.clean(), watch
