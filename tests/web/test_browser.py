"""The dashboard in Debian's Chromium against a real uvicorn server on a free loopback port.

Every non-origin request is intercepted and recorded (the network guard of conftest
does not cover a browser subprocess), and any dialog fails the test.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from core import MESSAGE_ADAPTER
from core.providers import dialect_names
from tests.replay.web_server import serving
from tests.web.web_corpus import XSS_PAYLOADS, every_kind, long_trace, temp_store
from web.app import create_app
from web.devtools import demo_data
from web.settings import Settings

pytestmark = pytest.mark.browser

playwright_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
PROVIDERS = dialect_names()
# Elements trace data could have smuggled in: script-ish tags, event handlers, htmx attributes the templates never
# write (the cards' hx-disable, the next-page link, the phases link, a body's window placeholders and the diff's
# "show more" link are ours).
INJECTED = """() => [...document.querySelectorAll('#timeline *')].filter(el =>
     ['SCRIPT','IFRAME','OBJECT','EMBED','STYLE','BASE','SVG','MATH'].includes(el.tagName.toUpperCase()) ||
     [...el.attributes].some(a => a.name.startsWith('on') ||
       ((a.name.startsWith('hx-') || a.name.startsWith('data-hx-')) &&
        !(el.tagName === 'ARTICLE' && a.name === 'hx-disable') && !el.matches('[data-next-page]') &&
        !el.matches('[data-phases-link]') && !el.matches('[data-window-pending]') &&
        !el.matches('[data-more-changes] a') && !el.matches('[data-options-form]')))
   ).map(el => el.outerHTML.slice(0, 80))"""


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    messages = every_kind("Plan the trip: <b>Lisbon</b> in May?", conversation_id="c-every") + long_trace(450)
    for i, payload in enumerate(XSS_PAYLOADS):
        messages += every_kind(payload, conversation_id=f"xss-{i}")
    messages += [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.every_kind() + demo_data.incident()]
    # A small jump limit so the permalink test takes both roads: load-through and open-the-page.
    app = create_app(Settings(max_jump_cards=150), temp_store(messages))
    with serving(app) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.fail("Debian's Chromium is missing: run `apt-get install -y chromium` (scripts/test.sh does)")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@dataclass
class Watch:
    """What a page did that it must not: dialogs, requests to other origins, non-GET requests, console errors."""

    dialogs: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    mutating: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def clean(self) -> bool:
        return not (self.dialogs or self.foreign or self.mutating or self.errors)


@pytest.fixture
def page(browser: object, base_url: str) -> Iterator[tuple[object, Watch]]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    watch = Watch()

    def route(route: object) -> None:
        request = route.request  # type: ignore[attr-defined]
        if not request.url.startswith(base_url + "/"):
            watch.foreign.append(request.url)
            route.abort()  # type: ignore[attr-defined]
            return
        if request.method not in ("GET", "HEAD"):
            watch.mutating.append(f"{request.method} {request.url}")
        route.continue_()  # type: ignore[attr-defined]

    context.route("**/*", route)
    pg = context.new_page()
    pg.on("dialog", lambda d: (watch.dialogs.append(d.message), d.dismiss()))
    pg.on("console", lambda m: watch.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: watch.errors.append(str(e)))
    yield pg, watch
    context.close()


Visit = Callable[..., tuple[Any, Watch]]


@pytest.fixture
def visit(page: tuple[object, Watch], base_url: str) -> Visit:
    """Opens a path of the server under test in ``page`` (resized to ``viewport`` first, when given); the page and
    its watch."""

    def go(path: str, viewport: dict[str, int] | None = None) -> tuple[Any, Watch]:
        pg, watch = page
        if viewport is not None:
            pg.set_viewport_size(viewport)  # type: ignore[attr-defined]
        pg.goto(base_url + path)  # type: ignore[attr-defined]
        return pg, watch

    return go


def _shot(pg: object, name: str, full: bool = False) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / name), full_page=full)  # type: ignore[attr-defined]


def _until(check: object, timeout: float = 10.0) -> None:
    """Poll from Python: the CSP forbids eval, so Playwright's string predicates cannot run in the page."""
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def _in_view(pg: object, selector: str) -> bool:
    return bool(
        pg.evaluate(  # type: ignore[attr-defined]
            """(sel) => { const el = document.querySelector(sel); if (!el) return false;
                 const r = el.getBoundingClientRect(); return r.bottom > 0 && r.top < window.innerHeight; }""",
            selector,
        )
    )


def test_open_expand_reasoning_and_jump_call_result_and_back(visit: Visit) -> None:
    pg, watch = visit("/")
    _shot(pg, "list.png")
    pg.click("a[href='/conversations/c-every']")  # type: ignore[attr-defined]
    pg.wait_for_selector("[data-kind='assistant-text']")  # type: ignore[attr-defined]
    card = "[data-msg-id^='m4-'][data-kind='assistant-text']"
    reasoning = pg.locator(f"{card} [data-reasoning]")  # type: ignore[attr-defined]
    assert not reasoning.evaluate("d => d.open")
    reasoning.locator("summary").click()
    assert reasoning.evaluate("d => d.open")
    assert pg.locator(f"{card} [data-thinking='signed']").is_visible()  # type: ignore[attr-defined]
    assert pg.locator(f"{card} [data-thinking='redacted']").is_visible()  # type: ignore[attr-defined]
    _shot(pg, "conversation.png")

    pg.locator(f"{card} [data-jump-result]").first.click()  # type: ignore[attr-defined]
    result_id = pg.evaluate("location.hash.slice(1)")  # type: ignore[attr-defined]
    assert result_id.startswith("result-")
    assert _in_view(pg, f"#{result_id}")
    pg.locator(f"#{result_id} [data-jump-call]").click()  # type: ignore[attr-defined]
    call_id = pg.evaluate("location.hash.slice(1)")  # type: ignore[attr-defined]
    assert call_id.startswith("call-")
    assert _in_view(pg, f"#{call_id}")
    assert pg.evaluate("document.activeElement.dataset.msgId").startswith("m4-")  # type: ignore[attr-defined]
    _shot(pg, "conversation-call.png")
    pg.go_back()  # type: ignore[attr-defined]
    assert pg.evaluate("location.hash.slice(1)") == result_id  # type: ignore[attr-defined]
    assert watch.clean(), watch


def test_inline_image_only_after_click_and_remote_never(visit: Visit) -> None:
    pg, watch = visit("/conversations/c-every")
    assert pg.locator("#timeline img").count() == 0  # type: ignore[attr-defined]
    pg.locator("[data-show-inline]").first.click()  # type: ignore[attr-defined]
    img = pg.locator("#timeline img.loc__img")  # type: ignore[attr-defined]
    _until(lambda: img.evaluate("i => i.complete && i.naturalWidth") == 24)
    img.scroll_into_view_if_needed()
    _shot(pg, "inline-image.png")
    # Remote media stayed links: nothing was requested from example.com while reading the page.
    assert pg.locator("[data-remote-link]").count() > 0  # type: ignore[attr-defined]
    assert watch.clean(), watch


def test_scrolling_loads_the_next_page(visit: Visit) -> None:
    pg, watch = visit("/conversations/c-long")
    cards = pg.locator("#timeline > [data-msg-id]")  # type: ignore[attr-defined]
    assert cards.count() == 100
    pg.locator("[data-next-page]").scroll_into_view_if_needed()  # type: ignore[attr-defined]
    _until(lambda: cards.count() >= 200)
    for _ in range(10):
        if pg.locator("[data-timeline-end]").count():  # type: ignore[attr-defined]
            break
        pg.mouse.wheel(0, 200_000)  # type: ignore[attr-defined]
        pg.wait_for_timeout(300)  # type: ignore[attr-defined]
    assert cards.count() == 451
    ids = pg.eval_on_selector_all("#timeline > [data-msg-id]", "els => els.map(e => e.dataset.msgId)")  # type: ignore[attr-defined]
    assert len(set(ids)) == 451 and ids[:2] == ["u0", "r0"] and ids[-1] == "r449"
    assert watch.clean(), watch


@pytest.mark.parametrize(("card", "road"), [("r180", "loaded through"), ("r300", "its own page")])
def test_permalink_reload_scrolls_to_a_card_on_a_later_page(
    page: tuple[object, Watch], base_url: str, card: str, road: str
) -> None:
    pg, watch = page
    pg.goto(f"{base_url}/conversations/c-long#msg-{card}")  # type: ignore[attr-defined]
    pg.wait_for_selector(f"#msg-{card}")  # type: ignore[attr-defined]
    pg.wait_for_timeout(300)  # type: ignore[attr-defined]
    assert _in_view(pg, f"#msg-{card}")
    first = pg.eval_on_selector("#timeline > [data-msg-id]", "e => e.dataset.msgId")  # type: ignore[attr-defined]
    assert first == ("u0" if road == "loaded through" else "r299")
    pg.reload()  # type: ignore[attr-defined]
    pg.wait_for_selector(f"#msg-{card}")  # type: ignore[attr-defined]
    pg.wait_for_timeout(300)  # type: ignore[attr-defined]
    assert _in_view(pg, f"#msg-{card}")
    _shot(pg, f"permalink-{card}.png")
    assert watch.clean(), watch


def test_failed_next_page_says_so(page: tuple[object, Watch], base_url: str) -> None:
    pg, watch = page
    pg.route(  # type: ignore[attr-defined]
        "**/conversations/c-long?offset=100", lambda route: route.fulfill(status=503, body="down for a moment")
    )
    pg.goto(base_url + "/conversations/c-long")  # type: ignore[attr-defined]
    more = pg.locator("[data-next-page]")  # type: ignore[attr-defined]
    more.scroll_into_view_if_needed()
    _until(lambda: "Could not load more cards" in more.inner_text())
    assert "503" in more.inner_text()
    assert more.get_attribute("href") == "/conversations/c-long?offset=100"  # the plain link still works
    assert pg.locator("#timeline > [data-msg-id]").count() == 100  # type: ignore[attr-defined]
    watch.errors = [e for e in watch.errors if "503" not in e]  # the browser logs the failed request itself
    assert watch.clean(), watch


def test_permalink_to_a_missing_card_is_harmless(visit: Visit) -> None:
    pg, watch = visit("/conversations/c-long#msg-nowhere")
    # One bounded try: the card is not on the first pages, so the script opens ?at= once...
    pg.wait_for_url(re.compile(r"\?at=msg-nowhere#msg-nowhere$"))  # type: ignore[attr-defined]
    pg.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
    # ...and stops there: no loop of navigations.
    pg.wait_for_timeout(1000)  # type: ignore[attr-defined]
    assert pg.evaluate("location.search") == "?at=msg-nowhere"  # type: ignore[attr-defined]
    assert pg.locator("#timeline > [data-msg-id]").count() >= 100  # type: ignore[attr-defined]
    assert watch.clean(), watch


def test_jump_to_a_result_on_the_next_page(visit: Visit) -> None:
    pg, watch = visit("/conversations/c-long")
    assert pg.locator("#msg-r99").count() == 0  # type: ignore[attr-defined]
    pg.locator("#msg-r98 [data-jump-result]").click()  # type: ignore[attr-defined]
    pg.wait_for_selector("#result-r99-call98")  # type: ignore[attr-defined]
    pg.wait_for_timeout(200)  # type: ignore[attr-defined]
    assert _in_view(pg, "#result-r99-call98")
    assert watch.clean(), watch


def test_keyboard_moves_between_cards_and_expands(visit: Visit, base_url: str) -> None:
    pg, watch = visit("/")
    pg.keyboard.press("j")  # type: ignore[attr-defined]
    first = pg.evaluate("document.activeElement.getAttribute('href')")  # type: ignore[attr-defined]
    pg.keyboard.press("j")  # type: ignore[attr-defined]
    second = pg.evaluate("document.activeElement.getAttribute('href')")  # type: ignore[attr-defined]
    assert first != second and second.startswith("/conversations/")
    pg.keyboard.press("k")  # type: ignore[attr-defined]
    assert pg.evaluate("document.activeElement.getAttribute('href')") == first  # type: ignore[attr-defined]
    pg.keyboard.press("Enter")  # type: ignore[attr-defined]
    pg.wait_for_url(base_url + first)  # type: ignore[attr-defined]
    pg.goto(base_url + "/")  # type: ignore[attr-defined]
    pg.keyboard.press("/")  # type: ignore[attr-defined]
    pg.keyboard.type("lisbon")  # type: ignore[attr-defined]
    pg.keyboard.press("Enter")  # type: ignore[attr-defined]
    pg.wait_for_url(base_url + "/?q=lisbon")  # type: ignore[attr-defined]
    assert pg.locator("[data-conversation-id]").count() == 2  # type: ignore[attr-defined]  # c-every and the demo trip
    _shot(pg, "list-search.png")
    pg.goto(base_url + "/conversations/c-every")  # type: ignore[attr-defined]
    for _ in range(4):
        pg.keyboard.press("j")  # type: ignore[attr-defined]
    focused = pg.evaluate("document.activeElement.dataset.msgId")  # type: ignore[attr-defined]
    assert focused.startswith("m4-")  # system, user, assistant, assistant
    pg.keyboard.press("o")  # type: ignore[attr-defined]
    assert pg.evaluate("document.activeElement.querySelector('details').open")  # type: ignore[attr-defined]
    assert watch.clean(), watch


XSS_SHARDS = 4
"""The corpus is cut in this many tests (each loads three pages per payload), so both test workers can share it."""


@pytest.mark.parametrize("shard", range(XSS_SHARDS), ids=lambda n: f"part{n + 1}of{XSS_SHARDS}")
def test_xss_corpus_renders_inert(page: tuple[object, Watch], base_url: str, shard: int) -> None:
    pg, watch = page
    for i, payload in list(enumerate(XSS_PAYLOADS))[shard::XSS_SHARDS]:
        pg.goto(f"{base_url}/conversations/{quote(f'xss-{i}')}")  # type: ignore[attr-defined]
        # Open everything a reviewer could open, click every "show" button and every remote link's neighbour.
        pg.eval_on_selector_all("details", "els => els.forEach(d => d.open = true)")  # type: ignore[attr-defined]
        for button in pg.locator("[data-show-inline]").all():  # type: ignore[attr-defined]
            button.click()
        pg.wait_for_timeout(50)  # type: ignore[attr-defined]
        text = pg.inner_text("#timeline")  # type: ignore[attr-defined]
        visible = " ".join(payload.split())
        assert visible in " ".join(text.split()), payload
        injected = pg.evaluate(INJECTED)  # type: ignore[attr-defined]
        assert injected == [], (payload, injected)
        if i == 0:
            _shot(pg, "xss.png")
        # The same hostile conversation's request bodies and diff (repaired: the corpus holds damaged records).
        provider, other = PROVIDERS[i % len(PROVIDERS)], PROVIDERS[(i + 1) % len(PROVIDERS)]
        for url in (
            f"{base_url}/conversations/{quote(f'xss-{i}')}/payload/{provider}?repair=1",
            f"{base_url}/conversations/{quote(f'xss-{i}')}/diff?left={provider}&right={other}&repair=1",
        ):
            pg.goto(url)  # type: ignore[attr-defined]
            pg.eval_on_selector_all("details", "els => els.forEach(d => d.open = true)")  # type: ignore[attr-defined]
            pg.hover("pre.json")  # type: ignore[attr-defined]
            text = " ".join(pg.inner_text("main").split())  # type: ignore[attr-defined]
            assert json.dumps(payload, ensure_ascii=False)[1:-1] in text or visible in text, (payload, url)
            assert pg.evaluate(INJECTED.replace("#timeline *", "main *")) == [], (payload, url)  # type: ignore[attr-defined]
    assert watch.clean(), watch


def test_a_hostile_path_shows_inert_on_the_not_found_page(page: tuple[object, Watch], base_url: str) -> None:
    pg, watch = page
    pg.goto(f"{base_url}/nothing/{quote(XSS_PAYLOADS[1])}")  # type: ignore[attr-defined]
    assert XSS_PAYLOADS[1] in pg.inner_text("main")  # type: ignore[attr-defined]
    assert pg.evaluate(INJECTED.replace("#timeline *", "main *")) == []  # type: ignore[attr-defined]
    watch.errors = [e for e in watch.errors if "404 (Not Found)" not in e]
    assert watch.clean(), watch


def test_check_form_posts_with_token_from_the_same_origin(
    page: tuple[object, Watch], base_url: str, tmp_path: Path
) -> None:
    pg, watch = page
    upload = tmp_path / "incident.jsonl"
    upload.write_text(
        '{"role": "user", "msg_type": "text", "content": "hi", "msg_id": "u1", "conversation_id": "c",'
        ' "intermediate_trace": {"records": [{"role": "assistant", "content": "lost", "msg_id": "a1"}]}}\n'
    )
    pg.goto(base_url + "/check")  # type: ignore[attr-defined]
    pg.set_input_files("input[type=file]", str(upload))  # type: ignore[attr-defined]
    pg.click("button[type=submit]")  # type: ignore[attr-defined]
    pg.wait_for_selector("[data-check-report]")  # type: ignore[attr-defined]
    row = pg.locator("[data-findings] tr[data-integrity='type-lost']")  # type: ignore[attr-defined]
    assert row.count() == 1
    assert "AssistantTextMessage" in row.inner_text()
    _shot(pg, "check.png")
    assert watch.mutating == [f"POST {base_url}/check"]
    watch.mutating.clear()
    assert watch.clean(), watch


def test_damaged_record_and_history_cards(visit: Visit) -> None:
    pg, watch = visit("/conversations/c-every")
    damaged = pg.locator("#timeline > [data-integrity='type-lost']")  # type: ignore[attr-defined]
    assert damaged.count() == 2
    note = damaged.first.locator("[data-integrity-note]")
    assert "ContractError" in note.inner_text() and "助理消息需要子类实现转换过程" in note.inner_text()
    damaged.first.scroll_into_view_if_needed()
    _shot(pg, "damaged.png")
    history = pg.locator("[data-kind='user-history'] [data-history]")  # type: ignore[attr-defined]
    nested = history.locator("[data-placement='nested']")
    assert not nested.first.is_visible()
    history.locator("summary").first.click()
    assert nested.first.is_visible() and nested.count() == 5
    history.scroll_into_view_if_needed()
    _shot(pg, "history.png")
    assert watch.clean(), watch


def _api(base_url: str, path: str) -> dict[str, object]:
    with urllib.request.urlopen(base_url + path) as response:  # loopback, our own server
        return json.loads(response.read())  # type: ignore[no-any-return]


def _linked(pg: object, selector: str) -> int:
    return int(pg.locator(selector).count())  # type: ignore[attr-defined]


def test_full_flow(page: tuple[object, Watch], base_url: str) -> None:
    """list -> search -> open -> reasoning -> call/result and back -> every payload -> diff -> permalink -> keys."""
    pg, watch = page
    pg.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)  # type: ignore[attr-defined]
    ek = f"{base_url}/conversations/{demo_data.EVERY_KIND}"
    pg.goto(base_url + "/")  # type: ignore[attr-defined]
    _shot(pg, "list.png")
    pg.keyboard.press("/")  # type: ignore[attr-defined]
    pg.keyboard.type("rainy days")  # type: ignore[attr-defined]  # in a tool result deep in a trace, not a title
    pg.keyboard.press("Enter")  # type: ignore[attr-defined]
    pg.wait_for_url(base_url + "/?q=rainy+days")  # type: ignore[attr-defined]
    rows = pg.eval_on_selector_all("[data-conversation-id]", "els => els.map(e => e.dataset.conversationId)")  # type: ignore[attr-defined]
    assert rows == [demo_data.EVERY_KIND]
    pg.click(f"a[href='/conversations/{demo_data.EVERY_KIND}']")  # type: ignore[attr-defined]
    pg.wait_for_selector("#msg-ek-a1")  # type: ignore[attr-defined]

    reasoning = pg.locator("#msg-ek-a1 [data-reasoning]")  # type: ignore[attr-defined]
    reasoning.locator("summary").click()
    assert reasoning.evaluate("d => d.open")
    assert pg.locator("#msg-ek-a1 [data-thinking='signed']").is_visible()  # type: ignore[attr-defined]
    pg.locator("#msg-ek-a1 [data-jump-result]").first.click()  # type: ignore[attr-defined]
    assert pg.evaluate("location.hash") == "#result-ek-t1-call_flights"  # type: ignore[attr-defined]
    assert _in_view(pg, "#result-ek-t1-call_flights")
    pg.locator("#result-ek-t1-call_flights [data-jump-call]").click()  # type: ignore[attr-defined]
    assert pg.evaluate("location.hash") == "#call-ek-a1-call_flights"  # type: ignore[attr-defined]
    assert _in_view(pg, "#call-ek-a1-call_flights")
    pg.locator("#msg-ek-a1").scroll_into_view_if_needed()  # type: ignore[attr-defined]
    _shot(pg, "conversation.png")

    for provider in PROVIDERS:
        pg.goto(f"{ek}/payload/{provider}")  # type: ignore[attr-defined]
        assert pg.locator("#payload-json").count() == 1  # type: ignore[attr-defined]
        pg.hover("#msg-ek-u1 .card__kind")  # type: ignore[attr-defined]  # a card lights up what it became
        _until(lambda: _linked(pg, "#payload-json .mk.is-linked[data-hl='msg-ek-u1']") > 0)
        node = pg.locator("#payload-json [data-hl='msg-ek-a4']").first  # type: ignore[attr-defined]
        node.scroll_into_view_if_needed()
        node.hover()  # and a part of the payload lights up its card
        _until(lambda: "is-linked" in (pg.get_attribute("#msg-ek-a4", "class") or ""))  # type: ignore[attr-defined]
        if provider == "anthropic":
            pg.locator("#msg-ek-u1").scroll_into_view_if_needed()  # type: ignore[attr-defined]
            pg.hover("#msg-ek-u1 .card__kind")  # type: ignore[attr-defined]
            pg.wait_for_timeout(300)  # type: ignore[attr-defined]
            _shot(pg, "payload.png")
    pg.click("[data-copy]")  # type: ignore[attr-defined]
    _until(lambda: pg.inner_text("[data-copy]") == "Copied")  # type: ignore[attr-defined]
    copied = json.loads(pg.evaluate("navigator.clipboard.readText()"))  # type: ignore[attr-defined]
    assert copied == _api(base_url, f"/api/conversations/{demo_data.EVERY_KIND}/payload/{PROVIDERS[-1]}")["body"]
    pg.click("[data-phases-link]")  # type: ignore[attr-defined]
    pg.wait_for_selector("[data-phase='to_list']")  # type: ignore[attr-defined]

    pg.goto(f"{ek}/diff?left=openai&right=anthropic")  # type: ignore[attr-defined]
    assert pg.locator("[data-cause='system']").is_visible()  # type: ignore[attr-defined]
    change = pg.locator("[data-cause='system'] .chg").first  # type: ignore[attr-defined]
    key = change.get_attribute("data-hl")
    change.hover()
    _until(lambda: _linked(pg, f"pre.json .is-linked[data-hl='{key}']") >= 1)
    change.locator("a").click()
    _shot(pg, "diff.png")

    pg.goto(f"{base_url}/conversations/{demo_data.INCIDENT}/payload/gemini")  # type: ignore[attr-defined]
    assert "助理消息需要子类实现转换过程" in pg.inner_text("[data-contract-error]")  # type: ignore[attr-defined]
    pg.click("[data-repair-link]")  # type: ignore[attr-defined]
    pg.wait_for_selector("[data-repaired]")  # type: ignore[attr-defined]

    pg.goto(f"{ek}#msg-ek-u9")  # type: ignore[attr-defined]
    pg.wait_for_timeout(300)  # type: ignore[attr-defined]
    assert _in_view(pg, "#msg-ek-u9")
    pg.reload()  # type: ignore[attr-defined]
    pg.wait_for_timeout(300)  # type: ignore[attr-defined]
    assert _in_view(pg, "#msg-ek-u9")

    pg.goto(base_url + "/?q=Berlin")  # type: ignore[attr-defined]
    pg.keyboard.press("j")  # type: ignore[attr-defined]
    pg.keyboard.press("Enter")  # type: ignore[attr-defined]
    pg.wait_for_url(ek)  # type: ignore[attr-defined]
    assert watch.clean(), watch
