"""In Chromium: a 20,000-character tool result is no wall, "show all" loads it whole, a masked key reveals on a click.

The conversation's id holds ``/`` and ``?``, so the flow also walks the id encoding of web.urls from the list.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core import MESSAGE_ADAPTER
from tests.replay.web_server import serving
from tests.web.test_browser import Watch, _shot, _until, browser, page
from tests.web.web_corpus import temp_store
from web.app import create_app
from web.settings import Settings

pytestmark = pytest.mark.browser

__all__ = ["browser", "page"]  # the fixtures this module borrows

CID = "team/alpha?run=1"
KEY = "sk-proj-" + "Qa1Ws2Ed3Rf4" * 4
ODD_IDS = ("..", "%2F", "\u200fx/y", "a b#c")
RESULT = "\n".join(f"{i:05d} log line " + "z" * 60 for i in range(280)) + "\nEND-OF-RESULT"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    def msg(**fields: object) -> object:
        return MESSAGE_ADAPTER.validate_python({"conversation_id": CID, **fields})

    call = {"id": "c1", "name": "read_logs", "arguments": "{}"}
    messages = [
        msg(role="user", msg_type="text", msg_id="u1", create_ts=1, content=f"Why does it fail? My key is {KEY}."),
        msg(
            role="assistant", msg_type="text", msg_id="a1", create_ts=2, content="Reading the logs.", tool_calls=[call]
        ),
        msg(role="tool", msg_id="t1", create_ts=3, tool_reses=[{"call_id": "c1", "result": RESULT}]),
        msg(role="assistant", msg_type="text", msg_id="a2", create_ts=4, content="The disk is full."),
    ]
    for i, cid in enumerate(ODD_IDS):  # ids a browser would rewrite if they went in a path as they are
        messages.append(
            MESSAGE_ADAPTER.validate_python(
                {
                    "conversation_id": cid,
                    "role": "user",
                    "msg_type": "text",
                    "msg_id": f"odd-{i}",
                    "create_ts": 10 + i,
                    "content": f"odd id {i}",
                }
            )
        )
    app = create_app(Settings(), temp_store(messages))  # type: ignore[arg-type]
    with serving(app) as base_url:
        yield base_url


def _height(pg: object, selector: str) -> float:
    return float(pg.evaluate("(s) => document.querySelector(s).getBoundingClientRect().height", selector))  # type: ignore[attr-defined]


def test_long_result_collapses_show_all_loads_it_whole_and_a_key_reveals(
    page: tuple[object, Watch], base_url: str
) -> None:
    pg, watch = page
    assert len(RESULT) > 20_000
    pg.goto(base_url + "/")  # type: ignore[attr-defined]
    pg.click("a[data-nav-item]:has-text('Why does it fail')")  # type: ignore[attr-defined]
    pg.wait_for_selector("article[data-msg-id='t1']")  # type: ignore[attr-defined]
    assert pg.text_content("header[data-conversation] code") == CID  # type: ignore[attr-defined]

    result = "article[data-msg-id='t1'] pre"
    collapsed = _height(pg, result)
    assert collapsed < 600, collapsed  # about 20 lines, not a wall
    assert pg.get_attribute(result, "data-collapsed") is not None  # type: ignore[attr-defined]
    pg.locator("article[data-msg-id='t1']").scroll_into_view_if_needed()  # type: ignore[attr-defined]
    _shot(pg, "longtext-collapsed.png")

    link = pg.locator("article[data-msg-id='t1'] [data-show-all]")  # type: ignore[attr-defined]
    assert link.text_content() == f"show all ({len(RESULT):,} characters)"
    link.click()
    _until(lambda: pg.get_attribute(result, "data-expanded") is not None)  # type: ignore[attr-defined]
    text = pg.text_content(result)  # type: ignore[attr-defined]
    assert text == RESULT  # the whole value, past the 20,000-character preview
    assert _height(pg, result) > 10 * collapsed
    pg.evaluate(  # type: ignore[attr-defined]
        "(s) => window.scrollBy(0, document.querySelector(s).getBoundingClientRect().bottom - innerHeight + 80)", result
    )
    _shot(pg, "longtext-expanded.png")

    user = "article[data-msg-id='u1']"
    assert KEY not in pg.content()  # type: ignore[attr-defined]
    secret = pg.locator(f"{user} button[data-secret]")  # type: ignore[attr-defined]
    assert secret.text_content().startswith("sk-…[masked openai key #")
    pg.locator(user).scroll_into_view_if_needed()  # type: ignore[attr-defined]
    _shot(pg, "secret-masked.png")
    secret.click()
    _until(lambda: pg.locator(f"{user} [data-revealed]").count() == 1)  # type: ignore[attr-defined]
    assert pg.text_content(f"{user} [data-revealed]") == KEY  # type: ignore[attr-defined]
    assert pg.text_content(f"{user} pre") == f"Why does it fail? My key is {KEY}."  # type: ignore[attr-defined]
    _shot(pg, "secret-revealed.png")
    assert watch.clean(), watch


def test_odd_ids_open_from_the_list_in_a_real_browser(page: tuple[object, Watch], base_url: str) -> None:
    pg, watch = page
    for cid in ODD_IDS:
        pg.goto(base_url + "/")  # type: ignore[attr-defined]
        index = ODD_IDS.index(cid)
        pg.click(f"a[data-nav-item]:has-text('odd id {index}')")  # type: ignore[attr-defined]
        pg.wait_for_selector("header[data-conversation]")  # type: ignore[attr-defined]
        assert pg.get_attribute("header[data-conversation]", "data-conversation") == cid  # type: ignore[attr-defined]
        pg.click("a[data-payload-link='openai']")  # type: ignore[attr-defined]
        pg.wait_for_selector("#payload-json")  # type: ignore[attr-defined]
        assert pg.get_attribute("header[data-conversation]", "data-conversation") == cid  # type: ignore[attr-defined]
    assert watch.clean(), watch
