"""Suite runs from the dashboard: only a token-bearing POST starts one, once per key; the page follows it to the end."""

from __future__ import annotations

import re
import threading

import httpx
import pytest

from core.store import Store
from core.suites import Suites
from tests.suites import suite_data
from tests.web.suites.conftest import COUNT, HOSTILE_TITLES, HX, form_key, save, start, wait
from tests.web.web_corpus import csrf_cookie
from tests.web.web_html import live_content, parse
from web.devtools.stub_provider import StubServer

DIVERGE = (1, 4)
RUN_PATH = re.compile(r"^/suite-runs/([0-9a-f]{32})$")


@pytest.fixture
def suite(client: httpx.Client) -> str:
    """A suite of the ``COUNT`` plain conversations; its page's path."""
    answer = save(client, "plain", q="weather <<c00", sort="oldest")
    assert answer.status_code == 303
    return str(answer.headers["location"])


def _run_path(answer: httpx.Response) -> str:
    assert answer.status_code == 303, answer.text[:400]
    location = str(answer.headers["location"])
    assert RUN_PATH.match(location), location
    return location


def _diverge(stub: StubServer, which: tuple[int, ...]) -> None:
    suite_data.script(stub.base_url, COUNT, diverge=frozenset(which), mode="final")


def test_the_suite_page_has_the_run_form_with_a_fresh_key(client: httpx.Client, suite: str) -> None:
    html = client.get(suite).text
    page = parse(html)
    (form,) = [el for el in page.elements if el.tag == "form" and el.has("data-suite-run-form")]
    assert (form.get("method"), form.get("action")) == ("post", f"{suite}/runs")
    assert form_key(html) != form_key(client.get(suite).text)
    options = {el.get("value"): el for el in page.elements if el.tag == "option"}
    assert not options["openai"].has("disabled") and options["anthropic"].has("disabled")
    assert {"final", "steps", ""} <= set(options)  # the modes, and "no baseline" (there is no run yet)
    assert "last" not in options
    assert live_content(html) == []


def test_starting_without_the_csrf_token_is_refused(client: httpx.Client, suite: str, store: Store) -> None:
    html = client.get(suite).text
    fields = {"idempotency_key": form_key(html), "provider": "openai", "model": "gpt-4o"}
    assert client.post(f"{suite}/runs", data=fields).status_code == 403
    assert client.post(f"{suite}/runs", data={**fields, "_csrf_token": "forged"}).status_code == 403
    assert Suites(store).runs("plain") == ()


def test_get_never_starts_a_suite_run(client: httpx.Client, suite: str, store: Store, stub: StubServer) -> None:
    assert client.get(f"{suite}/runs", params={"provider": "openai", "model": "gpt-4o"}).status_code == 405
    assert Suites(store).runs("plain") == () and stub.state.requests == []


def test_the_same_key_twice_is_one_suite_run(client: httpx.Client, suite: str, store: Store, stub: StubServer) -> None:
    html = client.get(suite).text
    key = form_key(html)
    fields = {"_csrf_token": csrf_cookie(client.cookies), "idempotency_key": key, "provider": "openai",
              "model": "gpt-4o"}  # fmt: skip
    answers: list[httpx.Response] = []

    def post() -> None:
        answers.append(client.post(f"{suite}/runs", data=fields))

    threads = [threading.Thread(target=post) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    answers.append(client.post(f"{suite}/runs", data=fields))
    assert {_run_path(a) for a in answers} == {_run_path(answers[0])}
    assert len(Suites(store).runs("plain")) == 1
    wait(client, _run_path(answers[0]))
    assert len(stub.state.requests) == COUNT  # one replay per conversation, not one per press


def test_a_key_of_another_suite_is_refused(client: httpx.Client, suite: str, store: Store) -> None:
    first = start(client, suite)
    _run_path(first)
    assert save(client, "other", q="weather <<c001").status_code == 303
    key = form_key(client.get(suite).text)
    assert _run_path(start(client, suite, idempotency_key=key))
    other = start(client, "/suites/other", idempotency_key=key)
    assert other.status_code == 409
    assert Suites(store).runs("other") == ()


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"mode": "sideways"}, "mode is one of"),
        ({"concurrency": "0"}, "concurrency is between"),
        ({"max_cost": "lots"}, "max cost is a number"),
        ({"provider": "anthropic"}, "anthropic is unavailable"),
        ({"model": "claude-x"}, "is not a openai model"),
        ({"baseline": "last"}, "has no finished run in mode final compared by similar:0.6 yet"),
        ({"baseline": "../../etc"}, "the baseline is"),
        ({"idempotency_key": "short"}, "idempotency key"),
    ],
)
def test_a_bad_field_starts_nothing_and_says_which(
    client: httpx.Client, suite: str, store: Store, fields: dict[str, str], said: str
) -> None:
    answer = start(client, suite, **fields)
    assert answer.status_code == 400
    assert said in answer.text
    assert Suites(store).runs("plain") == ()


def test_a_run_reaches_the_end_and_shows_each_outcome(client: httpx.Client, suite: str, stub: StubServer) -> None:
    path = _run_path(start(client, suite))
    page = client.get(path).text
    assert 'id="suite-run-live"' in page and "<progress" in page
    final = wait(client, path)
    assert 'data-suite-run-status="finished"' in final
    assert f'<progress class="suite-progress__bar" max="{COUNT}" value="{COUNT}"' in final
    assert re.search(r"data-progress-remaining>0<", final) and re.search(r"data-progress-failed>0<", final)
    rows = re.findall(r'<tr data-item="([^"]+)" data-outcome="(\w+)"', final)
    assert rows == [(suite_data.conversation_id(i), "matched") for i in range(COUNT)]
    assert len(re.findall(r'href="/runs/[0-9a-f]{32}" data-item-run', final)) == COUNT
    assert live_content(final) == []
    assert "data-regressions" not in final  # no baseline, no comparison
    assert len(stub.state.requests) == COUNT


def test_the_forms_concurrency_bounds_the_replays_in_flight_on_a_server_of_more_workers(
    client: httpx.Client, suite: str, stub: StubServer
) -> None:
    """The server runs four jobs at once; a run asked for one at a time gets one at a time."""
    path = _run_path(start(client, suite, model="stub-slow-0.2", model_as_typed="1", concurrency="1"))
    assert 'data-outcome="matched"' in wait(client, path, timeout=60)
    assert stub.state.requests and len(stub.state.requests) == COUNT
    assert stub.state.peak_in_flight == 1


def test_a_second_run_against_the_first_lists_the_regressions(
    client: httpx.Client, suite: str, stub: StubServer
) -> None:
    first = _run_path(start(client, suite))
    wait(client, first)
    _diverge(stub, DIVERGE)
    second = _run_path(start(client, suite, baseline="last"))
    html = wait(client, second)
    regressed = [suite_data.conversation_id(i) for i in DIVERGE]
    assert re.findall(r'data-regression="([^"]+)"', html) == regressed
    assert re.search(r"data-regression-count>2<", html)
    links = re.findall(r'href="([^"]+)" data-regression-run', html)
    assert all(re.fullmatch(r"/runs/[0-9a-f]{32}", link) for link in links) and len(links) == 2
    assert client.get(links[0]).status_code == 200
    page = client.get(second).text
    assert f'href="{first}" data-baseline' in page

    report = client.get(f"/api{second}").json()
    assert report["baseline"] == first.removeprefix("/suite-runs/")
    assert sorted(r["conversation_id"] for r in report["regressions"]) == regressed
    assert report["progress"] == {"total": COUNT, "done": COUNT, "failed": 0, "remaining": 0,
                                  "cost_usd": report["progress"]["cost_usd"]}  # fmt: skip
    assert report["exit_code"] == 6

    suite_page = client.get(suite).text
    assert len(re.findall(r"data-suite-run-row=", suite_page)) == 2
    assert "2 regression(s)" in client.get("/suites").text


def test_the_outcome_table_sorts_and_filters_on_the_server(client: httpx.Client, suite: str, stub: StubServer) -> None:
    _diverge(stub, DIVERGE)
    path = _run_path(start(client, suite))
    wait(client, path)

    def ids(**params: str) -> list[str]:
        return re.findall(r'<tr data-item="([^"]+)"', client.get(path, params=params).text)

    everyone = [suite_data.conversation_id(i) for i in range(COUNT)]
    assert ids() == everyone
    assert ids(sort="position", order="desc") == everyone[::-1]
    diverged = [suite_data.conversation_id(i) for i in DIVERGE]
    assert ids(outcome="diverged") == diverged
    assert ids(outcome="matched") == [c for c in everyone if c not in diverged]
    by_outcome = ids(sort="outcome")
    assert by_outcome == [c for c in everyone if c not in diverged] + diverged  # matched before diverged
    assert ids(sort="outcome", order="desc")[: len(diverged)] == diverged
    assert ids(sort="step")[: len(diverged)] == diverged  # the diverged have a step; the others none, last
    html = client.get(path, params={"sort": "cost", "outcome": "diverged"}).text
    assert 'href="/suite-runs/' in html and "sort=cost&amp;order=desc&amp;outcome=diverged" in html
    for bad in ({"sort": "title; drop table"}, {"order": "sideways"}, {"outcome": "lost"}):
        assert client.get(path, params=bad).status_code == 400


def test_the_live_region_is_a_fragment_for_htmx(client: httpx.Client, suite: str) -> None:
    path = _run_path(start(client, suite))
    fragment = client.get(path, headers=HX)
    assert fragment.text.lstrip().startswith('<section class="suite-live')
    assert fragment.headers["vary"] == "HX-Request"
    wait(client, path)


def test_hostile_titles_in_a_run_are_text(client: httpx.Client, stub: StubServer) -> None:
    path = _run_path(start(client, str(save(client, "all", q="What is the weather").headers["location"])))
    html = wait(client, path)
    assert live_content(html) == [] and live_content(client.get(path).text) == []
    text = parse(html).text
    for title in HOSTILE_TITLES:
        assert title in text


def test_unknown_suites_and_runs_are_404(client: httpx.Client) -> None:
    assert client.get("/suites/nothing-here").status_code == 404
    assert client.get(f"/suite-runs/{'0' * 32}").status_code == 404
    assert client.get(f"/api/suite-runs/{'0' * 32}").status_code == 404


def test_a_steps_run_replays_each_turn_and_links_its_step_runs(
    client: httpx.Client, suite: str, stub: StubServer, store: Store
) -> None:
    suite_data.script(stub.base_url, COUNT, diverge=frozenset({3}), mode="steps")
    path = _run_path(start(client, suite, mode="steps"))
    html = wait(client, path)
    outcomes = dict(re.findall(r'<tr data-item="([^"]+)" data-outcome="(\w+)"', html))
    assert outcomes == {suite_data.conversation_id(i): "diverged" if i == 3 else "matched" for i in range(COUNT)}
    links = re.findall(r'href="(/step-runs/[0-9a-f]{32}[^"]*)" data-item-run', html)
    assert len(links) == COUNT
    assert sum("?at=1#step-1" in link for link in links) == 1  # the diverged one opens at its step
    recorded = {r.run_id for r in store.list_step_runs(limit=50)}
    assert {link.split("/")[2].split("?")[0] for link in links} == recorded


def test_a_capped_run_shows_its_spend_against_the_cap_and_the_step_replays_it_stopped(
    client: httpx.Client, suite: str, stub: StubServer
) -> None:
    for i in range(COUNT):  # step 1 answers with 2,000 output tokens: 0.02 USD, past the cap on its own
        steps = [{"text": "x" * 8000, "tool_calls": [suite_data.call(i)]}, {"text": suite_data.FINAL_TEXT}]
        httpx.post(f"{stub.base_url}/__stub/script", json={"match": suite_data.marker(i), "steps": steps})
    path = _run_path(start(client, suite, mode="steps", concurrency="1", max_cost="0.005"))
    html = wait(client, path)
    assert re.search(r"[0-9.]+</span> USD so far of <span data-max-cost>0.005</span> USD max cost", html)
    assert re.search(r"data-stopped-by-cost>1 stopped before a step that could pass the max cost", html)
    assert len(stub.state.requests) == 1
