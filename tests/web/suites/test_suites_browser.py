"""Suites in Chromium: save a suite from the list's filters, run it, watch the bar fill, open a regression's run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.store import Store
from core.suites import Suites, run_item
from tests.replay.web_server import replay_app, serving
from tests.suites import suite_data
from tests.web.suites.conftest import COUNT, add
from tests.web.test_browser import Visit, Watch, _shot, _until, browser, page, visit  # noqa: F401 - fixtures
from web.devtools.stub_provider import StubServer
from web.replays.service import RunService

pytestmark = pytest.mark.browser

REGRESSED = 2
DELAY = 0.6
"""Seconds the stub takes per answer: long enough to see the bar part-way."""


@pytest.fixture
def base_url(store: Store, env: dict[str, str]) -> Iterator[str]:
    with serving(replay_app(store, RunService(store, workers=2, environ=lambda: env, timeout=5))) as url:
        yield url


def _script(stub: StubServer, *, diverge: int | None = None) -> None:
    """Every conversation answered after ``DELAY`` with a final text (matched), ``diverge`` with a tool call."""
    for i in range(COUNT):
        step: dict[str, Any] = {"text": suite_data.FINAL_TEXT, "delay": DELAY}
        if i == diverge:
            step = {**suite_data.diverging_steps(i)[0], "delay": DELAY}
        answer = httpx.post(f"{stub.base_url}/__stub/script", json={"match": suite_data.marker(i), "steps": [step]})
        assert answer.status_code == 200


def _status(pg: Any) -> str | None:
    return pg.get_attribute("#suite-run-live", "data-suite-run-status")  # type: ignore[no-any-return]


def _run_to_the_end(pg: Any, shot: str | None = None) -> None:
    """Press Run on the suite's page, see the bar part-way, wait for it to fill."""
    pg.click("[data-suite-run-submit]")
    pg.wait_for_selector("#suite-run-live")
    assert _status(pg) == "running"
    if shot is not None:
        _until(lambda: int(pg.inner_text("[data-progress-done]")) > 0)
        _shot(pg, shot)
    _until(lambda: _status(pg) == "finished", timeout=30)
    bar = pg.locator("[data-progress-bar]")
    assert bar.get_attribute("value") == bar.get_attribute("max") == str(COUNT)
    assert pg.inner_text("[data-progress-remaining]") == "0"


def test_save_a_suite_from_the_list_run_it_twice_and_open_a_regressions_run(
    visit: Visit,  # noqa: F811 - the fixture imported above
    base_url: str,
    stub: StubServer,
) -> None:
    pg, watch = visit("/")
    pg.fill("[data-search]", "weather <<c00")
    pg.select_option("[data-filter=sort]", "oldest")
    pg.click(".search button[type=submit]")
    pg.wait_for_selector("[data-suite-save]")
    assert pg.inner_text("[data-suite-count]") == str(COUNT)
    pg.fill("[data-suite-name]", "nightly <weather>")
    _shot(pg, "suites-save.png")
    pg.click("[data-suite-save-submit]")
    pg.wait_for_selector("[data-suite-run-form]")
    assert pg.inner_text("h1 [data-suite-name]") == "nightly <weather>"
    assert pg.inner_text("[data-suite-size]") == f"{COUNT} conversations"
    assert pg.locator("[data-member]").count() == COUNT

    _script(stub)
    _run_to_the_end(pg, "suites-run-progress.png")
    assert pg.locator("[data-outcome=matched]").count() == COUNT
    _shot(pg, "suites-run-done.png", full=True)
    first = pg.get_attribute("#suite-run-live", "data-suite-run")

    # Run again, the first run as baseline (the form's default once a run has finished), one conversation diverging.
    pg.click("[data-suite-link]")
    pg.wait_for_selector("[data-suite-run-form]")
    assert pg.locator("[data-suite-run-row]").count() == 1
    _shot(pg, "suites-suite.png", full=True)
    assert pg.input_value("[data-suite-baseline]") == "last"
    _script(stub, diverge=REGRESSED)
    _run_to_the_end(pg)
    assert pg.get_attribute("[data-baseline]", "href") == f"/suite-runs/{first}"
    regressed = suite_data.conversation_id(REGRESSED)
    assert [el.get_attribute("data-regression") for el in pg.query_selector_all("[data-regression]")] == [regressed]
    assert pg.inner_text("[data-regression-count]") == "1"
    _shot(pg, "suites-regressions.png", full=True)

    # The outcome filter is a plain link: the server answers the diverged rows only.
    pg.click("[data-outcome-choice=diverged]")
    pg.wait_for_url("**outcome=diverged")
    assert [el.get_attribute("data-item") for el in pg.query_selector_all("[data-item]")] == [regressed]

    pg.click(f"[data-regression='{regressed}'] [data-regression-run]")
    pg.wait_for_selector("[data-run]")
    assert pg.url.startswith(f"{base_url}/runs/")
    assert pg.get_attribute("[data-run]", "data-run-status") == "ok"
    assert regressed in pg.inner_text(".crumbs")
    _shot(pg, "suites-regression-run.png", full=True)
    pg.click("nav a[href='/suites']")
    pg.wait_for_selector("[data-suites]")
    assert "1 regression(s)" in pg.inner_text("[data-last-run]")
    _shot(pg, "suites-list.png")
    assert not (watch.dialogs or watch.foreign or watch.errors), watch
    assert all(m.startswith("POST ") for m in watch.mutating)


def test_the_suite_form_chooses_the_comparison_and_the_run_page_says_which_judged_each_answer(
    visit: Visit,  # noqa: F811 - the fixture imported above
    base_url: str,
    store: Store,
    stub: StubServer,
) -> None:
    from core.suites import Suites

    Suites(store).create("answers", conversations=[suite_data.conversation_id(i) for i in range(2)])
    pg, watch = visit("/suites/answers")
    for i, text in enumerate((suite_data.FINAL_TEXT, "You're welcome!")):
        steps = [{"text": text}]
        httpx.post(f"{stub.base_url}/__stub/script", json={"match": suite_data.marker(i), "steps": steps})
    assert pg.input_value("[data-suite-compare]") == "similar:0.6"
    pg.fill("[data-suite-compare]", "exact")
    _shot(pg, "suites-form-compare.png")
    pg.click("[data-suite-run-submit]")
    pg.wait_for_selector("#suite-run-live")
    _until(lambda: _status(pg) == "finished", timeout=30)
    assert pg.inner_text("[data-suite-run-comparison]") == "exact"
    assert "none" in pg.inner_text("[data-no-baseline]")
    other = suite_data.conversation_id(1)
    row = f"[data-item='{other}']"
    assert pg.get_attribute(row, "data-outcome") == "diverged"
    said = pg.inner_text(f"{row} [data-item-answer]")
    assert "compared by exact: score 0.00" in said and "+[You're welcome!]" in said
    assert pg.get_attribute(f"[data-item='{suite_data.conversation_id(0)}']", "data-outcome") == "matched"
    _shot(pg, "suites-run-comparison.png", full=True)
    pg.click("[data-suite-link]")
    pg.wait_for_selector("[data-suite-run-form]")
    assert pg.inner_text("[data-suite-run-comparison]") == "exact"
    assert not (watch.dialogs or watch.foreign or watch.errors), watch


# Rows whose title runs out of its cell or under its outcome and badges: some line of the title's link reaches past
# the cell's right edge or meets the outcome cell's badges.
UNDER_THE_BADGES = """() => [...document.querySelectorAll('[data-item]')].filter(row => {
    const cell = row.querySelector('.suite-outcomes__conv').getBoundingClientRect();
    const badges = [...row.querySelectorAll('.outcome, .badge')].map(b => b.getBoundingClientRect());
    return [...row.querySelector('.suite-outcomes__conv a').getClientRects()].some(r => r.right > cell.right + 1 ||
      badges.some(b => r.left < b.right && r.right > b.left && r.top < b.bottom && r.bottom > b.top));
  }).map(row => row.dataset.item)"""


@pytest.mark.parametrize("width", [1280, 900])
def test_a_suite_runs_long_titles_wrap_in_their_cell_and_a_refused_item_names_its_damaged_record_once(
    visit: Visit,  # noqa: F811 - the fixture imported above
    store: Store,
    env: dict[str, str],
    tmp_path: Path,
    width: int,
) -> None:
    long_title = " ".join(["Refund for a damaged parcel, then the weather in Lisbon for the weekend"] * 3)
    add(store, tmp_path / "long.jsonl", {70: ("long-title", long_title), 71: ("long-word", "Refund" + "x" * 90)})
    (tmp_path / "damaged").mkdir()
    suite_data.seed(store, tmp_path / "damaged", COUNT + 1, damaged=frozenset({COUNT}))
    damaged = suite_data.conversation_id(COUNT)
    suites = Suites(store)
    suites.create("long", conversations=["long-title", "long-word", damaged])
    run = suites.new_run("long", provider="openai", model="gpt-4o", mode="steps")
    for pk in suites.open_items(run.run_id):
        run_item(store, pk, environ=env)
    pg, watch = visit(f"/suite-runs/{run.run_id}", viewport={"width": width, "height": 900})
    assert pg.locator("[data-item]").count() == 3
    assert pg.evaluate(UNDER_THE_BADGES) == []
    why = pg.inner_text(f"[data-item='{damaged}'] .suite-outcomes__why")
    assert why.count(f"{damaged}-step") == 1, why
    _shot(pg, f"suite-run-long-titles-{width}.png")
    assert watch.clean(), watch
