"""Moving around a 2,000-record trace in Chromium: end and start, the next damaged record, error and
divergence, and a kind filter, each opening the one page that holds its target."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from core import MESSAGE_ADAPTER, Message
from core.store import NewRun
from tests.replay.web_server import serving
from tests.web.test_browser import Visit, Watch, _in_view, _shot, _until, browser, page, visit  # noqa: F401
from tests.web.web_corpus import temp_store
from web.app import create_app
from web.settings import Settings

pytestmark = pytest.mark.browser

CONVERSATION = "c-nav"
RECORDS = 2000
DAMAGED = (1234, 1778)  # assistant records (even positions)
ERROR = 1501
DIVERGED = 1600


def nav_trace() -> list[Message]:
    """One user message whose trace holds 2,000 assistant/tool records: two damaged, one error."""
    trace: list[dict[str, Any]] = []
    for i in range(RECORDS):
        base = {"msg_id": f"r{i}", "create_ts": 1_700_000_001_000 + i, "conversation_id": CONVERSATION}
        if i % 2 == 0:
            call = {"id": f"call{i}", "name": "search", "arguments": json.dumps({"q": f"step {i}"})}
            record = {**base, "role": "assistant", "msg_type": "text", "content": f"step {i}", "tool_calls": [call]}
            if i in DAMAGED:
                del record["msg_type"]  # a bare assistant record (TFROB-299)
        else:
            result = {"call_id": f"call{i - 1}", "name": "search", "result": f"result {i}", "is_error": i == ERROR}
            record = {**base, "role": "tool", "tool_reses": [result]}
        trace.append(record)
    user = {
        "role": "user", "msg_type": "text", "msg_id": "u0", "create_ts": 1_700_000_000_000, "content": "a long task",
        "conversation_id": CONVERSATION, "intermediate_trace": {"records": trace},
    }  # fmt: skip
    return [MESSAGE_ADAPTER.validate_python(user)]


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    store = temp_store(nav_trace())
    for up_to, text in ((f"r{DIVERGED - 2}", f"step {DIVERGED - 2}"), (f"r{DIVERGED}", "a different step")):
        reply = {
            "role": "assistant", "msg_type": "text", "msg_id": "run-x", "content": text,
            "conversation_id": CONVERSATION,
            "tool_calls": [{"id": "new", "name": "search", "arguments": json.dumps({"q": text})}],
        }  # fmt: skip
        run = store.start_run(
            NewRun(CONVERSATION, provider="openai", model="gpt-4.1", request_body={}, up_to_msg_id=up_to)
        )
        store.finish_run(run.run_id, status="ok", reply=reply)
    app = create_app(Settings(), store)
    with serving(app) as base_url:
        yield base_url


def _first_card(pg: object) -> str:
    return str(pg.eval_on_selector("#timeline > [data-msg-id]", "e => e.dataset.msgId"))  # type: ignore[attr-defined]


def _timeline_fetches(pg: object, base_url: str) -> list[str]:
    """Every request for a slice of the timeline (a page load or an htmx fetch) from now on."""
    seen: list[str] = []
    prefix = f"{base_url}/conversations/{CONVERSATION}"
    pg.on("request", lambda r: seen.append(r.url) if r.url.startswith(prefix) and "/seek" not in r.url else None)  # type: ignore[attr-defined]
    return seen


def _land(pg: object, card: str) -> None:
    pg.wait_for_selector(f"#msg-{card}")  # type: ignore[attr-defined]
    pg.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
    pg.wait_for_timeout(200)  # type: ignore[attr-defined]
    assert _in_view(pg, f"#msg-{card}"), card


def test_jump_to_the_end_and_back_to_the_start_loads_one_page_each(visit: Visit, base_url: str) -> None:  # noqa: F811
    pg, watch = visit(f"/conversations/{CONVERSATION}")
    fetches = _timeline_fetches(pg, base_url)
    pg.click("[data-seek-end]")  # type: ignore[attr-defined]
    _land(pg, f"r{RECORDS - 1}")
    assert len(fetches) == 1, fetches  # the last page directly, not the 20 before it
    assert _first_card(pg) == f"r{RECORDS - 100}"
    assert pg.locator("[data-timeline-end]").count() == 1  # type: ignore[attr-defined]
    _shot(pg, "timeline-end.png")
    pg.click("[data-seek-start]")  # type: ignore[attr-defined]
    _land(pg, "u0")
    assert len(fetches) == 2, fetches
    assert watch.clean(), watch


def test_next_damaged_error_and_divergence_open_the_page_that_holds_them(visit: Visit, base_url: str) -> None:  # noqa: F811
    pg, watch = visit(f"/conversations/{CONVERSATION}")
    fetches = _timeline_fetches(pg, base_url)
    for seek, card in (
        ("damaged", f"r{DAMAGED[0]}"),
        ("error", f"r{ERROR}"),
        ("divergence", f"r{DIVERGED}"),
        ("damaged", f"r{DAMAGED[1]}"),
    ):
        before = len(fetches)
        pg.click(f"[data-seek='{seek}']")  # type: ignore[attr-defined]
        pg.wait_for_url(f"**?at=msg-{card}#msg-{card}")  # type: ignore[attr-defined]
        _land(pg, card)
        assert len(fetches) == before + 1, fetches[before:]  # one page, not every page before it
        assert _first_card(pg) != "u0"
        assert pg.evaluate("document.activeElement.dataset.msgId") == card  # type: ignore[attr-defined]
        if seek == "damaged":
            assert pg.get_attribute(f"#msg-{card}", "data-integrity") == "type-lost"  # type: ignore[attr-defined]
        if seek == "error":
            assert pg.locator(f"#msg-{card} [data-is-error='true']").count() == 1  # type: ignore[attr-defined]
            _shot(pg, "timeline-next-error.png")
    pg.click("[data-seek='damaged']")  # type: ignore[attr-defined]
    pg.wait_for_selector("[data-seek-notice]")  # type: ignore[attr-defined]
    assert pg.inner_text("[data-seek-notice]") == "No damaged record after this card."  # type: ignore[attr-defined]
    _land(pg, f"r{DAMAGED[1]}")
    assert watch.clean(), watch


def test_the_kind_filter_shows_one_kind_and_pages_within_it(visit: Visit) -> None:  # noqa: F811
    pg, watch = visit(f"/conversations/{CONVERSATION}")
    pg.select_option("[data-timeline-kind]", "tool")  # type: ignore[attr-defined]
    pg.wait_for_url("**?kind=tool")  # type: ignore[attr-defined]
    kinds = "els => els.map(e => e.dataset.kind)"
    cards = pg.locator("#timeline > [data-msg-id]")  # type: ignore[attr-defined]
    assert cards.count() == 100
    assert set(pg.eval_on_selector_all("#timeline > [data-msg-id]", kinds)) == {"tool"}  # type: ignore[attr-defined]
    assert pg.inner_text("[data-filtered]") == f"{RECORDS // 2} of {RECORDS + 1} cards"  # type: ignore[attr-defined]
    assert _first_card(pg) == "r1"
    _shot(pg, "timeline-kind-tool.png")
    pg.locator("[data-next-page]").scroll_into_view_if_needed()  # type: ignore[attr-defined]
    _until(lambda: cards.count() >= 200)
    assert set(pg.eval_on_selector_all("#timeline > [data-msg-id]", kinds)) == {"tool"}  # type: ignore[attr-defined]
    ids = pg.eval_on_selector_all("#timeline > [data-msg-id]", "els => els.map(e => e.dataset.msgId)")  # type: ignore[attr-defined]
    assert ids[100:102] == ["r201", "r203"]
    assert watch.clean(), watch


@pytest.mark.parametrize("query", ["/seek?what=banana", "?kind=banana"])
def test_an_unknown_seek_or_kind_is_refused_with_the_valid_names(base_url: str, query: str) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{base_url}/conversations/{CONVERSATION}{query}")  # loopback, our own server
    assert refused.value.code == 400
    body = refused.value.read().decode()
    assert "banana" in body and ("divergence" in body or "console" in body)


def test_a_seek_that_finds_nothing_says_so_where_the_reader_can_see_it(visit: Visit) -> None:  # noqa: F811
    pg, watch = visit(f"/conversations/{CONVERSATION}?at=msg-r{DAMAGED[1]}#msg-r{DAMAGED[1]}")
    _land(pg, f"r{DAMAGED[1]}")
    pg.click("[data-seek='damaged']")  # type: ignore[attr-defined]
    pg.wait_for_selector("[data-seek-notice]")  # type: ignore[attr-defined]
    _land(pg, f"r{DAMAGED[1]}")
    # In the window and not under the sticky bars: the point at its middle is the notice itself.
    seen = pg.evaluate(  # type: ignore[attr-defined]
        """() => { const el = document.querySelector('[data-seek-notice]'); const r = el.getBoundingClientRect();
                   const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
                   return r.top >= 0 && r.bottom <= window.innerHeight && !!hit && el.contains(hit); }"""
    )
    assert seen
    assert pg.inner_text("[data-seek-notice]") == "No damaged record after this card."  # type: ignore[attr-defined]
    _shot(pg, "timeline-seek-none.png")
    assert watch.clean(), watch
