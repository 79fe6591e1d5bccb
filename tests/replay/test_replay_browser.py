"""Re-run in Chromium: press it, watch the status update in place, read the reply card and the diff; a failure too."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from core.store import NewRun, Store
from tests.replay.replay_data import CONVERSATION, ORIGINAL_TEXT
from tests.replay.web_server import replay_app, serving
from tests.web.test_browser import Visit, Watch, _shot, _until, browser, page, visit  # noqa: F401 - fixtures
from web.devtools.stub_provider import Reply, StubServer
from web.replays.service import RunService

pytestmark = pytest.mark.browser


@pytest.fixture
def base_url(store: Store, stub: StubServer, stub_env: dict[str, str]) -> Iterator[str]:
    env = {k: v for k, v in stub_env.items() if not k.startswith(("ZHIPU", "DOUBAO"))}
    with serving(replay_app(store, RunService(store, environ=lambda: env, timeout=2))) as url:
        yield url


def _status(pg: object, selector: str = "[data-run]") -> str | None:
    return pg.get_attribute(selector, "data-run-status")  # type: ignore[attr-defined,no-any-return]


def test_rerun_updates_in_place_and_shows_the_reply_and_the_diff(visit: Visit, stub: StubServer) -> None:  # noqa: F811
    pg, watch = visit(f"/conversations/{CONVERSATION}")
    form = "#rerun-form"
    assert pg.is_disabled(f"{form} option[value=zhipu]")  # type: ignore[attr-defined]
    assert "set ZHIPU_API_KEY" in pg.inner_text(f"{form} option[value=zhipu]")  # type: ignore[attr-defined]
    pg.select_option(f"{form} [data-rerun-provider]", "anthropic")  # type: ignore[attr-defined]
    assert pg.input_value(f"{form} [data-rerun-model]") == "claude-sonnet-4-6"  # type: ignore[attr-defined]
    stub.state.script.append(Reply(text="Lisbon in May is sunny: about 24 degrees.", delay=1.0))
    pg.click(f"{form} [data-rerun-submit]")  # type: ignore[attr-defined]
    _until(lambda: pg.query_selector("#runs-live [data-run]") is not None)  # type: ignore[attr-defined]
    assert _status(pg, "#runs-live [data-run]") == "running"
    run_id = pg.get_attribute("#runs-live [data-run]", "data-run")  # type: ignore[attr-defined]
    _shot(pg, "replay-running.png")
    _until(lambda: _status(pg, f"#run-{run_id}") == "ok")
    live = pg.inner_text(f"#run-{run_id}")  # type: ignore[attr-defined]
    assert ORIGINAL_TEXT in live and "sunny: about 24 degrees." in live
    assert pg.inner_text(f"#run-{run_id} [data-side=replay] .card__body") == (  # type: ignore[attr-defined]
        "Lisbon in May is sunny: about 24 degrees."
    )
    assert pg.inner_text(f"#run-{run_id} [data-removed]") == "warm:"  # type: ignore[attr-defined]
    assert pg.inner_text(f"#run-{run_id} [data-added]") == "sunny:"  # type: ignore[attr-defined]
    pg.locator(f"#run-{run_id}").scroll_into_view_if_needed()  # type: ignore[attr-defined]
    _shot(pg, "replay-done.png", full=True)

    # A second press is a new run (the answer carried a fresh idempotency key); a 429 shows why it failed.
    pg.select_option(f"{form} [data-rerun-provider]", "openai")  # type: ignore[attr-defined]
    pg.fill(f"{form} [data-rerun-model]", "stub-error-429")  # type: ignore[attr-defined]
    pg.click(f"{form} [data-rerun-submit]")  # type: ignore[attr-defined]
    _until(lambda: len(pg.query_selector_all("#runs-live [data-run]")) == 2)  # type: ignore[attr-defined]
    failed = pg.get_attribute("#runs-live [data-run]", "data-run")  # type: ignore[attr-defined]
    assert failed != run_id
    _until(lambda: _status(pg, f"#run-{failed}") == "rate_limited")
    error = pg.inner_text(f"#run-{failed} [data-run-error]")  # type: ignore[attr-defined]
    assert "rate limited (HTTP 429)" in error and "retry after 1 s" in error
    assert pg.inner_text(f"#run-{failed} [data-run-label]") == "rate limited"  # type: ignore[attr-defined]
    _shot(pg, "replay-failed.png")
    assert len(stub.state.requests) == 2
    assert not (watch.dialogs or watch.foreign or watch.errors), watch


def test_rerun_from_a_card_runs_in_place_below_the_card_and_keeps_the_scroll_position(
    visit: Visit,  # noqa: F811 - the fixture imported above
    stub: StubServer,
) -> None:
    pg, watch = visit(f"/conversations/{CONVERSATION}", viewport={"width": 1280, "height": 420})  # the page scrolls
    url = pg.url
    card = "#msg-a-1"
    pg.click(f"{card} [data-card-rerun] summary")  # type: ignore[attr-defined]
    pg.locator(f"{card} [data-rerun-submit]").scroll_into_view_if_needed()  # type: ignore[attr-defined]
    scrolled = pg.evaluate("window.scrollY")  # type: ignore[attr-defined]
    assert scrolled > 0
    pg.select_option(f"{card} [data-rerun-provider]", "gemini")  # type: ignore[attr-defined]
    assert pg.input_value(f"{card} [data-rerun-model]") == "gemini-2.5-flash"  # type: ignore[attr-defined]
    pg.fill(f"{card} [data-rerun-model]", "stub-slow-5")  # type: ignore[attr-defined]  # longer than the timeout
    pg.click(f"{card} [data-rerun-submit]")  # type: ignore[attr-defined]
    run = f"{card} + [data-run]"
    _until(lambda: pg.query_selector(run) is not None)  # type: ignore[attr-defined]
    assert _status(pg, run) == "running"
    assert pg.url == url  # type: ignore[attr-defined]  # still the timeline, where the reader was
    assert abs(pg.evaluate("window.scrollY") - scrolled) < 5  # type: ignore[attr-defined]
    assert pg.query_selector("#runs-live [data-run]") is None  # type: ignore[attr-defined]  # not at the top
    _until(lambda: _status(pg, run) == "timeout", timeout=15)
    assert "no answer within the time limit" in pg.inner_text(f"{run} [data-run-error]")  # type: ignore[attr-defined]
    assert pg.inner_text(f"{run} .run__head a code") == "a-1"  # type: ignore[attr-defined]
    _shot(pg, "replay-card-in-place.png")
    (seen,) = stub.state.requests
    assert seen.dialect == "gemini" and [c["role"] for c in seen.body["contents"]] == ["user"]
    assert not (watch.dialogs or watch.foreign or watch.errors), watch


def test_after_back_the_model_follows_the_provider(visit: Visit, stub: StubServer) -> None:  # noqa: F811
    pg, watch = visit(f"/conversations/{CONVERSATION}/replays")
    form = "form[data-rerun-form]"
    pg.select_option(f"{form} [data-rerun-provider]", "gemini")  # type: ignore[attr-defined]
    assert pg.input_value(f"{form} [data-rerun-model]") == "gemini-2.5-flash"  # type: ignore[attr-defined]
    stub.state.script.append(Reply(text="Sunny."))
    pg.click(f"{form} [data-rerun-submit]")  # type: ignore[attr-defined]
    # The URL changes when the navigation commits; Back before the run page has loaded can hit a detached frame.
    pg.wait_for_url("**/runs/**", wait_until="load")  # type: ignore[attr-defined]
    pg.go_back()  # type: ignore[attr-defined]
    pg.wait_for_selector(f"{form} [data-rerun-model]")  # type: ignore[attr-defined]
    pg.wait_for_timeout(200)  # type: ignore[attr-defined]
    provider = pg.input_value(f"{form} [data-rerun-provider]")  # type: ignore[attr-defined]
    model = pg.input_value(f"{form} [data-rerun-model]")  # type: ignore[attr-defined]
    _shot(pg, "replay-after-back.png")
    defaults = {"openai": "gpt-4.1", "anthropic": "claude-sonnet-4-6", "gemini": "gemini-2.5-flash"}
    assert model == defaults[provider], (provider, model)
    assert not (watch.dialogs or watch.foreign or watch.errors), watch


def test_a_double_click_makes_one_run(visit: Visit, stub: StubServer) -> None:  # noqa: F811
    pg, watch = visit(f"/conversations/{CONVERSATION}")
    stub.state.script.append(Reply(text="once", delay=0.5))
    pg.dblclick("#rerun-form [data-rerun-submit]")  # type: ignore[attr-defined]
    _until(lambda: _status(pg, "#runs-live [data-run]") == "ok")
    time.sleep(0.5)  # a second run, had one started, would have appeared by now
    assert len(pg.query_selector_all("#runs-live [data-run]")) == 1  # type: ignore[attr-defined]
    assert len(stub.state.requests) == 1
    assert not (watch.dialogs or watch.foreign or watch.errors), watch


def test_the_runs_table_fits_the_window_with_a_long_error_and_a_long_model(
    page: tuple[object, Watch],  # noqa: F811 - the fixture imported above
    base_url: str,
    store: Store,
) -> None:
    pg, watch = page
    pg.set_viewport_size({"width": 1440, "height": 900})  # type: ignore[attr-defined]
    error = (
        "provider error (HTTP 400): "
        '{"error":{"code":400,"message":"* GenerateContentRequest.contents[3].parts[0].function_response.name: '
        'Name cannot be empty.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.'
        'BadRequest","fieldViolations":[{"field":"contents[3].parts[0].function_response.name"}]}]}}'
    )
    for model, status, message in (
        ("gemini-2.5-flash-preview-05-20", "http_error", error),
        ("claude-sonnet-4-6", "ok", None),
    ):
        run = store.start_run(NewRun(CONVERSATION, provider="gemini", model=model, request_body={}, up_to_msg_id="a-2"))
        store.finish_run(run.run_id, status=status, error=message)  # type: ignore[arg-type]
    pg.goto(f"{base_url}/conversations/{CONVERSATION}/replays")  # type: ignore[attr-defined]
    _shot(pg, "replays-table.png", full=True)
    width = pg.evaluate("document.documentElement.scrollWidth")  # type: ignore[attr-defined]
    assert width <= 1440, width
    table = pg.evaluate("document.querySelector('[data-runs]').getBoundingClientRect().right")  # type: ignore[attr-defined]
    assert table <= 1440
    heights = pg.eval_on_selector_all(  # type: ignore[attr-defined]
        "[data-run-row] td:nth-child(4) code", "els => els.map(e => e.getClientRects().length)"
    )
    assert heights == [1, 1], heights  # each model name on one line
    assert not (watch.dialogs or watch.foreign or watch.errors), watch


def test_the_run_count_in_the_header_follows_each_rerun_in_place(visit: Visit, stub: StubServer) -> None:  # noqa: F811
    pg, watch = visit(f"/conversations/{CONVERSATION}")
    assert pg.locator(".convhead [data-runs]").count() == 0  # type: ignore[attr-defined]  # no run yet
    stub.state.script.append(Reply(text="Sunny."))
    pg.click("#rerun-form [data-rerun-submit]")  # type: ignore[attr-defined]
    _until(lambda: pg.locator(".convhead [data-runs]").count() == 1)  # type: ignore[attr-defined]
    assert pg.inner_text(".convhead [data-runs]") == "1 run"  # type: ignore[attr-defined]
    stub.state.script.append(Reply(text="Warm."))
    pg.click("#msg-a-1 [data-card-rerun] summary")  # type: ignore[attr-defined]
    pg.click("#msg-a-1 [data-rerun-submit]")  # type: ignore[attr-defined]
    _until(lambda: pg.inner_text(".convhead [data-runs]") == "2 runs")  # type: ignore[attr-defined]
    pg.evaluate("window.scrollTo(0, 0)")  # type: ignore[attr-defined]
    _shot(pg, "replay-run-count.png")
    pg.click(".convhead [data-runs]")  # type: ignore[attr-defined]
    pg.wait_for_url("**/replays")  # type: ignore[attr-defined]
    assert pg.locator("[data-run-row]").count() == 2  # type: ignore[attr-defined]
    assert not (watch.dialogs or watch.foreign or watch.errors), watch
