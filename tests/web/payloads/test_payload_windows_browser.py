"""The payload page of a 10,000-record trace in Chromium: the body arrives window by window as the reader
scrolls, every window once, and the page's text is then the API's body byte for byte; a card whose part is
in a window not loaded yet loads it when hovered and lights it up."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.replay.web_server import serving
from tests.web.test_browser import Watch, _api, _shot, _until, browser, page  # noqa: F401 - fixtures
from tests.web.web_corpus import long_trace, temp_store
from web.app import create_app
from web.settings import Settings

pytestmark = pytest.mark.browser

PAYLOAD = "/conversations/c-big/payload/openai"
# Enough records for several windows and for the last card to lie past a jump's reach (max_jump_cards), few
# enough that scrolling through every window stays short.
RECORDS = 2_000
LAST_CARD = f"msg-r{RECORDS - 1}"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serving(create_app(Settings(), temp_store(long_trace(RECORDS, conversation_id="c-big")))) as base_url:
        yield base_url


def _pending(pg: object) -> list[str]:
    return list(pg.eval_on_selector_all("#payload-json [data-window-pending]", "els => els.map(e => e.id)"))  # type: ignore[attr-defined]


def test_scrolling_to_the_end_loads_every_window_and_a_card_lights_its_part(
    page: tuple[object, Watch],  # noqa: F811 - the fixture imported above
    base_url: str,
) -> None:
    pg, watch = page
    windows: list[str] = []
    pg.on("request", lambda r: windows.append(r.url) if "/window?" in r.url else None)  # type: ignore[attr-defined]
    pg.goto(f"{base_url}{PAYLOAD}?at={LAST_CARD}", timeout=120_000)  # type: ignore[attr-defined]
    pending = _pending(pg)
    assert len(pending) > 3
    last = pending[-1]

    # The last card's part is in the last window, not loaded: hovering the card loads it and lights it up.
    pg.locator(f"#{LAST_CARD}").scroll_into_view_if_needed()  # type: ignore[attr-defined]
    pg.hover(f"#{LAST_CARD} .card__kind")  # type: ignore[attr-defined]
    lit = f"#{last} .mk.is-linked[data-hl='{LAST_CARD}']"
    _until(lambda: pg.locator(lit).count() > 0, timeout=30)  # type: ignore[attr-defined]
    pg.wait_for_timeout(300)  # type: ignore[attr-defined]
    _shot(pg, "payload-windows.png", full=True)
    assert "is-linked" in (pg.get_attribute(f"#{LAST_CARD}", "class") or "")  # type: ignore[attr-defined]

    # Scrolling the body to its end brings every other window, in order.
    while pending := _pending(pg):
        # (From the page: htmx may replace the placeholder while it is being scrolled to.)
        pg.evaluate("id => { const el = document.getElementById(id); if (el) el.scrollIntoView(); }", pending[0])  # type: ignore[attr-defined]
        _until(lambda: pending[0] not in _pending(pg), timeout=30)
    numbers = sorted(int(url.split("n=")[1].split("&")[0]) for url in windows)
    assert numbers == list(range(1, int(last.rsplit("w", 1)[1]) + 1))  # each window fetched once
    text = pg.evaluate("document.getElementById('payload-json').textContent")  # type: ignore[attr-defined]
    body = _api(base_url, f"/api{PAYLOAD}")["body"]
    assert text == json.dumps(body, indent=2, ensure_ascii=False)
    assert watch.clean(), watch
