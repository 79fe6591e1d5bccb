"""The payload page's request options in Chromium: max tokens set in the form changes the body in place (htmx swaps
the panel, the address bar names the options) without a reload."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core import MESSAGE_ADAPTER
from tests.replay.web_server import serving
from tests.web.test_browser import Visit, browser, page, visit  # noqa: F401 - fixtures
from tests.web.web_corpus import temp_store
from web.app import create_app
from web.devtools import demo_data
from web.settings import Settings

pytestmark = pytest.mark.browser

PAYLOAD = f"/conversations/{demo_data.EVERY_KIND}/payload/anthropic"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.every_kind()]
    with serving(create_app(Settings(), temp_store(messages))) as base_url:
        yield base_url


def test_setting_max_tokens_changes_the_body_without_a_reload(visit: Visit) -> None:  # noqa: F811
    pg, watch = visit(PAYLOAD)
    pane = pg.locator("#payload-json")
    assert '"max_tokens": 1234' not in pane.inner_text()
    pg.evaluate("window.__sameDocument = true")  # a reload would forget it
    pg.locator("[data-options-form] summary").click()
    pg.locator("[data-options-form] [name=max_tokens]").fill("1234")
    pg.locator("[data-options-submit]").click()
    pg.locator("#payload-json", has_text='"max_tokens": 1234').wait_for()
    assert pg.evaluate("window.__sameDocument") is True
    assert "max_tokens=1234" in pg.url
    assert pg.locator("[data-options-applied]").count() == 1
    assert watch.clean(), watch
