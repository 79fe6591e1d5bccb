"""Replay steps in Chromium: start one from a user card, watch its progress, open it, follow the divergence
permalink, compare it with a second run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.replay.steps_data import STEP_MSG_IDS, STEPS_CONVERSATION, TURN
from tests.web.runs.steps_web import MODEL, dashboard, diverging_at_step_2, identical, stub_script
from tests.web.test_browser import Visit, Watch, _in_view, _shot, _until, browser, page, visit  # noqa: F401 - fixtures
from web.devtools.stub_provider import StubServer

pytestmark = pytest.mark.browser


@pytest.fixture
def base_url(tmp_path: Path, stub_env: dict[str, str]) -> Iterator[str]:
    env = {k: v for k, v in stub_env.items() if k.startswith(("OPENAI", "ANTHROPIC", "GEMINI"))}
    with dashboard(tmp_path, env) as (url, _):
        yield url


def _status(pg: object, selector: str) -> str | None:
    return pg.get_attribute(selector, "data-step-run-status")  # type: ignore[attr-defined,no-any-return]


def test_a_step_replay_from_a_user_card_to_its_divergence_and_a_comparison(
    visit: Visit,  # noqa: F811 - the fixture imported above
    base_url: str,
    stub: StubServer,
) -> None:
    pg, watch = visit(f"/conversations/{STEPS_CONVERSATION}")
    card = f"#msg-{TURN}"
    pg.click(f"{card} [data-card-steps] summary")  # type: ignore[attr-defined]
    assert pg.input_value(f"{card} [data-rerun-model]") == MODEL  # type: ignore[attr-defined]  # openai's default
    stub_script(stub, [{**step, "delay": 1.5} for step in diverging_at_step_2()])
    _shot(pg, "steps-card-form.png")
    pg.click(f"{card} [data-rerun-submit]")  # type: ignore[attr-defined]
    live = f"{card} + [data-step-run]"
    _until(lambda: pg.query_selector(live) is not None)  # type: ignore[attr-defined]
    assert _status(pg, live) == "running"
    assert pg.url.endswith(f"/conversations/{STEPS_CONVERSATION}")  # type: ignore[attr-defined]  # stays in place
    _until(lambda: "step 2 of about 4" in pg.inner_text(f"{live} [data-step-progress]"))  # type: ignore[attr-defined]
    _shot(pg, "steps-progress.png")
    _until(lambda: _status(pg, live) == "diverged")
    assert pg.inner_text(f"{live} [data-step-progress]") == "2 of 4 recorded steps replayed"  # type: ignore[attr-defined]
    assert "step 2" in pg.inner_text(f"{live} [data-divergence]")  # type: ignore[attr-defined]
    _shot(pg, "steps-diverged-in-place.png")

    pg.click(f"{live} [data-step-run-link]")  # type: ignore[attr-defined]  # open the run
    pg.wait_for_selector("[data-steps]")  # type: ignore[attr-defined]
    assert pg.inner_text("h1") == "Step replay"  # type: ignore[attr-defined]
    _shot(pg, "steps-run-page.png", full=True)
    pg.set_viewport_size({"width": 1280, "height": 500})  # type: ignore[attr-defined]  # the page scrolls
    pg.click("[data-divergence-link]")  # type: ignore[attr-defined]  # the permalink
    _until(lambda: "?at=2" in pg.url)  # type: ignore[attr-defined]
    pg.wait_for_selector("#step-2[data-step-at]")  # type: ignore[attr-defined]
    assert pg.get_attribute("#step-2", "aria-current") == "step"  # type: ignore[attr-defined]
    _until(lambda: _in_view(pg, "#step-2"))
    assert "/seats" in pg.inner_text("#step-2 [data-arguments-diff]")  # type: ignore[attr-defined]
    assert STEP_MSG_IDS[1] in pg.inner_text("#step-2 [data-side=recorded]")  # type: ignore[attr-defined]
    _shot(pg, "steps-divergence-permalink.png")

    # A second run of the same turn, from the conversation's header this time, then the two compared.
    pg.set_viewport_size({"width": 1280, "height": 900})  # type: ignore[attr-defined]
    pg.goto(f"{base_url}/conversations/{STEPS_CONVERSATION}")  # type: ignore[attr-defined]
    stub_script(stub, identical())
    pg.click("#steps-form [data-rerun-submit]")  # type: ignore[attr-defined]
    _until(lambda: pg.query_selector("#runs-live [data-step-run]") is not None)  # type: ignore[attr-defined]
    _until(lambda: _status(pg, "#runs-live [data-step-run]") == "matched")
    _shot(pg, "steps-header-matched.png")
    pg.goto(f"{base_url}/conversations/{STEPS_CONVERSATION}/replays")  # type: ignore[attr-defined]
    assert len(pg.query_selector_all("[data-step-run-row]")) == 2  # type: ignore[attr-defined]
    _shot(pg, "steps-replays.png", full=True)
    pg.click("[data-step-compare-form] button")  # type: ignore[attr-defined]
    pg.wait_for_selector("[data-first-difference]")  # type: ignore[attr-defined]
    assert pg.get_attribute("[data-first-difference]", "data-first-difference") == "2"  # type: ignore[attr-defined]
    assert pg.get_attribute("[data-compare-row='2']", "data-agree") == "no"  # type: ignore[attr-defined]
    _shot(pg, "steps-compare.png", full=True)
    assert len(stub.state.requests) == 6
    assert not (watch.dialogs or watch.foreign or watch.errors), watch
