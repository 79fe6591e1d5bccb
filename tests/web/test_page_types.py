"""Every page type: its width (a narrow page is centred, a wide one uses the whole window), declared once per page
in the base template's block; and in Chromium, in the light and the dark scheme, every visible text at least 4.5:1
against what is behind it (WCAG 2 contrast, from the computed styles)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.store import Store
from core.suites import Suites, run_item
from tests.replay.web_server import serving
from tests.web.test_browser import ARTIFACTS, CHROMIUM_ARGS, browser  # noqa: F401 - the browser fixture
from web.app import create_app
from web.cli.demo import point_providers_at
from web.devtools import demo_data
from web.devtools.demo_steps import seed_step_runs
from web.devtools.stub_provider import StubServer
from web.settings import Settings

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
WIDE_SLICES = frozenset({"suites", "runs", "payloads", "diff"})
"""Workbenches use the whole window; every other page (the list, a timeline, forms, errors, the API) is narrow."""
NARROW_MAX = 1100
MIN_CONTRAST = 4.5

_EXTENDS = re.compile(r'\{% extends "([^"]+)" %\}')
_TYPE = re.compile(r"\{% block page_type %\}(\w+)\{% endblock %\}")


def _page_type(name: str) -> str | None:
    """The type a template declares or inherits; None for a fragment (it extends no layout)."""
    source = (TEMPLATES / name).read_text()
    declared = _TYPE.search(source)
    if name == "base.html":
        return declared.group(1) if declared else None
    parent = _EXTENDS.search(source)
    if parent is None:
        return None
    return declared.group(1) if declared else _page_type(parent.group(1))


def test_every_page_declares_the_type_of_its_slice() -> None:
    pages = {
        str(path.relative_to(TEMPLATES)): kind
        for path in TEMPLATES.rglob("*.html")
        if (kind := _page_type(str(path.relative_to(TEMPLATES)))) is not None and not path.name.startswith("_")
    }
    assert len(pages) > 15
    expected = {name: "wide" if name.split("/")[0] in WIDE_SLICES else "narrow" for name in pages}
    assert pages == expected
    css = (TEMPLATES.parent / "static" / "app.css").read_text()
    for kind in ("narrow", "wide"):  # one rule each
        assert len(re.findall(rf"^\.page--{kind} \{{", css, re.M)) == 1, kind


@pytest.fixture(scope="module")
def every_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """The demo with its runs and step runs, a suite run over three of its conversations: one URL per page."""
    folder = tmp_path_factory.mktemp("every-page")
    demo = demo_data.build(folder, long_records=120)
    stub = StubServer(0).start()
    try:
        env = point_providers_at(stub.base_url, {})
        with Store.open(str(demo.db)) as store:
            matched, diverged, *_ = seed_step_runs(store, stub, env)
            suites = Suites(store)
            members = [demo_data.AGENT_STEPS, demo_data.INCIDENT, demo_data.EVERY_KIND]
            suites.create("demo", conversations=members)
            suite_run = suites.new_run("demo", provider="openai", model="gpt-4.1", mode="steps")
            for pk in suites.open_items(suite_run.run_id):
                run_item(store, pk, environ=env)
            (run, *_) = store.list_runs(demo_data.EVERY_KIND, limit=1)[0]
            (other, *_) = store.list_runs(demo_data.INCIDENT, limit=1)[0]
            ek = f"/conversations/{demo_data.EVERY_KIND}"
            pages = {
                "list": "/",
                "timeline": ek,
                "damaged timeline": f"/conversations/{demo_data.INCIDENT}",
                "import": "/import",
                "check": "/check",
                "not found": "/conversations/no-such-conversation",
                "API": "/api-docs",
                "suites": "/suites",
                "suite": "/suites/demo",
                "suite run": f"/suite-runs/{suite_run.run_id}",
                "runs": f"{ek}/replays",
                "run": f"/runs/{run.run_id}",
                "runs compared": f"/runs/compare?a={other.run_id}&b={run.run_id}",
                "step run": f"/step-runs/{diverged.run_id}",
                "step runs compared": f"/runs/compare?a={matched.run_id}&b={diverged.run_id}",
                "request bodies": f"/runs/compare/requests?a={other.run_id}&b={run.run_id}",
                "payload": f"{ek}/payload/anthropic",
                "phases": f"{ek}/payload/anthropic/phases",
                "diff": f"{ek}/diff?left=openai&right=anthropic",
                "a cause's changes": f"{ek}/diff/changes?left=openai&right=anthropic&cause=format&offset=0",
            }
            settings = Settings(attachments_root=demo.attachments)
            with serving(create_app(settings, store)) as base_url:
                yield base_url, pages
    finally:
        stub.shutdown()
        stub.server_close()


class Settling:
    """A page's requests in flight, so a test can wait for the page to settle: Playwright's networkidle waits half a
    second of silence after every page, whether or not anything is left to load."""

    def __init__(self, pg: Any) -> None:
        self.pg = pg
        self.in_flight: set[object] = set()
        pg.on("request", lambda request: self.in_flight.add(request))
        pg.on("requestfinished", lambda request: self.in_flight.discard(request))
        pg.on("requestfailed", lambda request: self.in_flight.discard(request))

    def wait(self, timeout: float = 30.0) -> None:
        """Until, two animation frames on (intersection observers have fired by then), no request is in flight and
        htmx is neither waiting for an answer nor swapping one in."""
        deadline = time.monotonic() + timeout
        while True:
            busy = self.pg.evaluate(_HTMX_BUSY)
            if not busy and not self.in_flight:
                return
            assert time.monotonic() < deadline, f"the page did not settle: {busy} {self.in_flight}"
            self.pg.wait_for_timeout(20)


_HTMX_BUSY = """() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() =>
  done(document.querySelectorAll('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added').length))))"""


def _open(browser: Any, scheme: str, width: int = 1280) -> Any:  # noqa: F811
    context = browser.new_context(color_scheme=scheme, viewport={"width": width, "height": 900})
    context.route("**/*", lambda route: route.continue_() if "127.0.0.1" in route.request.url else route.abort())
    return context


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 1600])
def test_narrow_pages_are_centred_and_wide_pages_use_the_window(
    browser: Any,  # noqa: F811
    every_page: tuple[str, dict[str, str]],
    width: int,
) -> None:
    base_url, pages = every_page
    context = _open(browser, "light", width)
    try:
        pg = context.new_page()
        found = {}
        for name, path in pages.items():
            pg.goto(base_url + path)
            box = pg.evaluate("(() => { const r = document.querySelector('main').getBoundingClientRect();"
                              " return [Math.round(r.left), Math.round(r.width)]; })()")  # fmt: skip
            found[name] = box
            if width == 1600 and name in ("run", "timeline"):
                ARTIFACTS.mkdir(exist_ok=True)
                pg.screenshot(path=str(ARTIFACTS / f"width-{name}.png"))
        page_width = pg.evaluate("document.documentElement.clientWidth")
        narrow = [(page_width - NARROW_MAX) // 2, NARROW_MAX]
        expected = {
            name: [0, page_width] if path.startswith(("/suite", "/runs", "/step-runs")) or "/payload/" in path
            or "/diff" in path or path.endswith("/replays") else narrow
            for name, path in pages.items()
        }  # fmt: skip
        assert {k: [v[0] // 2, v[1]] for k, v in found.items()} == {k: [v[0] // 2, v[1]] for k, v in expected.items()}
    finally:
        context.close()


# Every element with text of its own that is rendered, its text colour over the backgrounds behind it composited
# from the root down (each element's opacity fades its text into them); those under MIN_CONTRAST.
LOW_CONTRAST = """(least) => {
  const rgba = c => { const v = c.match(/[\\d.]+/g).map(Number); return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
  const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const lum = c => c.slice(0, 3).map(v => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const owns = el => [...el.childNodes].some(n => n.nodeType === 3 && n.data.trim()) ||
    (['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName) && !['checkbox', 'hidden'].includes(el.type) && el.value);
  const low = [];
  for (const el of document.querySelectorAll('body *')) {
    if (['SCRIPT', 'STYLE', 'OPTION', 'NOSCRIPT', 'TEMPLATE'].includes(el.tagName) || !owns(el)) continue;
    if (el.closest(':disabled')) continue;  // an inactive control: WCAG 1.4.3 asks nothing of it
    const box = el.getBoundingClientRect();
    if (!box.width || !box.height || !el.checkVisibility({visibilityProperty: true})) continue;
    const chain = []; for (let e = el; e; e = e.parentElement) chain.unshift(e);
    let behind = [255, 255, 255, 1], opacity = 1;
    for (const e of chain) {
      const s = getComputedStyle(e);
      behind = over(rgba(s.backgroundColor), behind);
      opacity *= Number(s.opacity);
    }
    const ink = rgba(getComputedStyle(el).color);
    const shown = over([ink[0], ink[1], ink[2], ink[3] * opacity], behind);
    const r = ratio(shown, behind);
    if (r < least) low.push(`${r.toFixed(2)} ${el.tagName.toLowerCase()}.${[...el.classList].join('.')} ` +
      `"${(el.value || el.textContent).trim().slice(0, 40)}" ${getComputedStyle(el).color} ` +
      `on rgb(${behind.slice(0, 3).map(Math.round)})`);
  }
  return low;
}"""


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_text_on_every_page_type_has_enough_contrast(
    browser: Any,  # noqa: F811
    every_page: tuple[str, dict[str, str]],
    scheme: str,
) -> None:
    base_url, pages = every_page
    context = _open(browser, scheme)
    try:
        pg = context.new_page()
        settling = Settling(pg)
        low: dict[str, list[str]] = {}
        for name, path in pages.items():
            pg.goto(base_url + path)
            settling.wait()
            pg.evaluate("document.querySelectorAll('main details').forEach(d => { d.open = true; })")  # all of it
            found = pg.evaluate(LOW_CONTRAST, MIN_CONTRAST)
            if found:
                low[name] = found
            if name in ("diff", "step run"):
                pg.screenshot(path=str(ARTIFACTS / f"contrast-{scheme}-{name.replace(' ', '-')}.png"), full_page=True)
        assert low == {}, "\n".join(f"{name}: {line}" for name, lines in low.items() for line in lines)
    finally:
        context.close()
