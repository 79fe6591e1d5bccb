"""Step replays in the dashboard: the controls, a run's page and live region, the JSON, the list and the compare page.

Every route is driven over HTTP against a served dashboard whose providers point at the stub.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from core.store import NewRun, Store
from tests.replay.replay_data import CONVERSATION
from tests.replay.steps_data import STEP_MSG_IDS, STEPS_CONVERSATION, TURN
from tests.web.runs.steps_web import (
    HX,
    MODEL,
    dashboard,
    diverging_at_step_2,
    identical,
    post_steps,
    step_form,
    step_run_id,
    stub_script,
    wait_step_run,
)
from tests.web.web_html import live_content, parse
from web.devtools.stub_provider import StubServer


@pytest.fixture
def served(tmp_path: Path, stub_env: dict[str, str]) -> Iterator[tuple[str, Store]]:
    env = {k: v for k, v in stub_env.items() if k.startswith(("OPENAI", "ANTHROPIC", "GEMINI"))}
    with dashboard(tmp_path, env) as running:
        yield running


@pytest.fixture
def client(served: tuple[str, Store]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served[0], timeout=15) as c:
        yield c


@pytest.fixture
def store(served: tuple[str, Store]) -> Store:
    return served[1]


def _run(client: httpx.Client, stub: StubServer, script: list[dict[str, object]], **fields: str) -> str:
    stub_script(stub, script)
    response = post_steps(client, {**step_form(client), **fields}, **HX)
    assert response.status_code == 200, response.text
    run_id = step_run_id(response.text)
    wait_step_run(client, run_id)
    return run_id


def test_the_header_and_each_user_card_with_a_trace_carry_a_replay_steps_form(client: httpx.Client) -> None:
    html = client.get(f"/conversations/{STEPS_CONVERSATION}").text
    page = parse(html)
    forms = [el for el in page.elements if el.tag == "form" and el.has("data-steps-form")]
    assert [f.get("action") for f in forms] == [f"/conversations/{STEPS_CONVERSATION}/step-runs"] * 2
    turns = [el.get("value") for el in page.elements if el.tag == "input" and el.get("name") == "turn"]
    assert turns == [TURN, TURN]  # the header's (the last turn) and the user card's
    assert re.search(r'id="msg-su-1".*?data-card-steps', html, re.S)
    keys = [el.get("value") for el in page.elements if el.get("name") == "idempotency_key"]
    assert len(keys) == len(set(keys))
    assert {el.get("name") for el in page.elements if el.tag == "input"} >= {"max_steps", "max_cost", "_csrf_token"}
    assert live_content(html) == []
    # A conversation whose user card has no trace records has no such control.
    assert "data-steps-form" not in client.get("/conversations/nope-none").text


def test_a_step_run_answers_in_place_with_its_progress_and_ends_matched(client: httpx.Client, stub: StubServer) -> None:
    stub_script(stub, [{**identical()[0], "delay": 0.6}, *identical()[1:]])
    response = post_steps(client, step_form(client), **HX)
    assert response.status_code == 200
    assert 'data-step-run-status="running"' in response.text and "step 1 of about 4" in response.text
    assert 'hx-trigger="every 1s"' in response.text and "compact=1" in response.text
    assert len(response.headers["x-next-idempotency-key"]) >= 16
    run_id = step_run_id(response.text)
    done = wait_step_run(client, run_id)
    assert 'data-step-run-status="matched"' in done and "4 of 4 recorded steps replayed" in done
    page = client.get(f"/step-runs/{run_id}")
    assert page.status_code == 200 and page.headers["vary"] == "HX-Request"
    html = page.text
    rows = re.findall(r'data-step-row="(\d)"\s+data-verdict="(\w+)"', html)
    assert rows == [("1", "same"), ("2", "same"), ("3", "same"), ("4", "same_final")]
    assert all(f"<code>{m}</code>" in html for m in STEP_MSG_IDS)  # each recorded step beside its replay
    assert "similarity 1.00" in html and "the same words" in html
    assert html.count("12 in ·") == 4  # the stub's usage, per step
    assert re.search(r"data-total-tokens>48 in", html)
    assert re.search(r"data-total-cost>\$0\.\d{6}<", html)  # gpt-4.1 is in genai-prices' table
    assert "data-divergence" not in html and live_content(html) == []
    assert len(stub.state.requests) == 4
    # No tools are stored for the turn: the page names those inferred and warns beside the verdict.
    assert re.search(r'data-step-run-tools="inferred">tools sent \(inferred from the recorded calls\): '
                     r"search_flights, book, weather, hotel<", html)  # fmt: skip
    assert re.search(r"data-tools-inferred>matched, with tools inferred from the recorded calls: an inferred "
                     r"schema can change what a model does", html)  # fmt: skip


def test_a_divergence_is_marked_and_its_permalink_opens_the_run_at_that_step(
    client: httpx.Client, stub: StubServer
) -> None:
    run_id = _run(client, stub, diverging_at_step_2())
    html = client.get(f"/step-runs/{run_id}").text
    permalink = f"/step-runs/{run_id}?at=2#step-2"
    assert f'href="{permalink}" data-divergence-link' in html
    assert re.search(r'id="step-2"[^>]*data-verdict="diverged"[^>]*data-first-divergence', html, re.S)
    assert "same tools, different arguments" in html and f"<code>{STEP_MSG_IDS[1]}</code>" in html
    diff = re.search(r"<table class=\"argdiff\".*?</table>", html, re.S)
    assert diff is not None
    assert re.search(r"<code>book</code></td><td><code>/seats</code>.*?>2</del>.*?>3</ins>", diff.group(0), re.S)
    assert re.findall(r'data-step-row="(\d)"\s+data-verdict="(\w+)"', html) == [
        ("1", "same"), ("2", "diverged"), ("3", "not_reached"), ("4", "not_reached")
    ]  # fmt: skip
    at = client.get(f"/step-runs/{run_id}", params={"at": "2"}).text
    assert re.search(r'id="step-2"[^>]*data-step-at aria-current="step"', at, re.S)
    assert at.count("data-step-at") == 1
    assert client.get(f"/step-runs/{run_id}", params={"at": "0"}).status_code == 400


def test_a_different_final_answer_diverges_and_the_page_says_which_comparison_judged_it(
    client: httpx.Client, stub: StubServer
) -> None:
    run_id = _run(client, stub, [*identical()[:-1], {"text": "You're welcome!"}])
    html = client.get(f"/step-runs/{run_id}").text
    assert re.search(r'id="step-4"[^>]*data-verdict="diverged"[^>]*data-first-divergence', html, re.S)
    assert 'data-reason="different_answer"' in html and "a different final answer" in html
    assert re.search(r"data-step-run-comparison>final answers compared by <code>similar:0.6</code>", html)
    assert "compared by similar:0.6: score 0.00 (bar 0.6)" in html
    assert re.search(r"data-added>You&#39;re welcome!</ins>", html)
    assert client.get(f"/api/step-runs/{run_id}").json()["comparison"] == "similar:0.6"


def test_the_replay_steps_form_chooses_the_comparison_the_job_applies(client: httpx.Client, stub: StubServer) -> None:
    final = identical()[-1]["text"]
    assert isinstance(final, str)
    run_id = _run(client, stub, [*identical()[:-1], {"text": final + " Enjoy!"}], compare="exact")
    html = client.get(f"/step-runs/{run_id}").text
    assert re.search(r"final answers compared by <code>exact</code>", html)
    assert 'data-reason="different_answer"' in html and "compared by exact: score 0.00" in html
    bad = post_steps(client, {**step_form(client), "compare": "fuzzy"}, **HX)
    assert "--compare is one of" in bad.text


def test_the_api_answers_with_the_fields_of_the_cli_json(client: httpx.Client, stub: StubServer, store: Store) -> None:
    run_id = _run(client, stub, diverging_at_step_2())
    answer = client.get(f"/api/step-runs/{run_id}")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    assert answer.json() == store.get_step_run(run_id).to_json()
    got = answer.json()
    assert (got["kind"], got["status"], got["diverged_at"], got["reason"]) == (
        "steps", "diverged", STEP_MSG_IDS[1], "different_arguments"
    )  # fmt: skip
    assert got["steps"][1]["detail"]["arguments_diff"][0]["diff"][0]["path"] == "/seats"
    assert client.get("/api/step-runs/nope").status_code == 404
    assert client.get("/step-runs/nope").status_code == 404


def test_a_post_without_its_token_or_from_another_origin_records_nothing(
    client: httpx.Client, stub: StubServer, store: Store
) -> None:
    fields = step_form(client)
    path = f"/conversations/{STEPS_CONVERSATION}/step-runs"
    no_token = {k: v for k, v in fields.items() if k != "_csrf_token"}
    assert post_steps(client, no_token).status_code == 403
    assert client.post(path, data={**fields, "provider": "openai", "model": MODEL},
                       headers={"Origin": "http://evil.example"}).status_code == 403  # fmt: skip
    assert client.get(path, params=fields).status_code == 405
    assert store.list_step_runs() == () and stub.state.requests == []


def test_the_same_idempotency_key_twice_is_one_run_and_one_set_of_calls(
    client: httpx.Client, stub: StubServer, store: Store
) -> None:
    stub_script(stub, identical())
    fields = step_form(client)
    first = post_steps(client, fields, **HX)
    again = post_steps(client, fields, **HX)
    assert step_run_id(first.text) == step_run_id(again.text)
    wait_step_run(client, step_run_id(first.text))
    assert len(store.list_step_runs()) == 1 and len(stub.state.requests) == 4
    plain = post_steps(client, fields)  # the same key from a form post without JavaScript: the same run
    assert plain.status_code == 303 and plain.headers["location"] == f"/step-runs/{step_run_id(first.text)}"
    elsewhere = {**step_form(client, CONVERSATION), "idempotency_key": fields["idempotency_key"]}
    assert post_steps(client, elsewhere, CONVERSATION).status_code == 409  # a key names one conversation's run
    assert len(store.list_step_runs()) == 1


def test_a_plain_form_post_lands_on_the_run_page(client: httpx.Client, stub: StubServer) -> None:
    stub_script(stub, identical())
    response = post_steps(client, step_form(client))
    assert response.status_code == 303
    location = response.headers["location"]
    assert re.fullmatch(r"/step-runs/[0-9a-f]{32}", location)
    wait_step_run(client, location.rsplit("/", 1)[1])
    html = client.get(location).text
    assert "<h1>Step replay</h1>" in html and 'data-step-run-status="matched"' in html


def test_limits_are_kept_and_bad_ones_are_said_in_place(client: httpx.Client, stub: StubServer, store: Store) -> None:
    run_id = _run(client, stub, identical(), max_steps="2")
    run = store.get_step_run(run_id)
    assert (run.status, run.reason, run.max_steps, len(run.steps)) == ("capped", "max_steps", 2, 2)
    assert "stopped by a limit" in client.get(f"/step-runs/{run_id}").text
    refused = post_steps(client, {**step_form(client), "max_steps": "many"}, **HX)
    assert refused.status_code == 200 and "max steps must be a whole number" in refused.text
    assert "data-run-refused" in refused.text
    wrong_turn = post_steps(client, {**step_form(client), "turn": STEP_MSG_IDS[0]}, **HX)
    assert "no top-level message with msg_id" in wrong_turn.text
    assert post_steps(client, {**step_form(client), "max_cost": "x"}).status_code == 400
    assert len(store.list_step_runs()) == 1
    capped = _run(client, stub, identical(), max_cost="0.5")
    shown = client.get(f"/step-runs/{capped}").text
    assert re.search(r"data-total-cost>\$0\.\d{6} of <span data-max-cost>0.5</span> USD max cost<", shown)


def test_a_damaged_turn_is_refused_with_no_provider_call(client: httpx.Client, stub: StubServer) -> None:
    fields = step_form(client, "conv-steps-damaged")
    response = post_steps(client, fields, "conv-steps-damaged", **HX)
    assert 'data-step-run-status="refused"' in response.text and "TFROB-299" in response.text
    page = client.get(f"/step-runs/{step_run_id(response.text)}").text
    assert page.count('data-verdict="not_reached"') == 4 and 'role="alert" data-step-run-error' in page
    assert stub.state.requests == []


def test_the_replays_page_lists_step_runs_and_compares_two(
    client: httpx.Client, stub: StubServer, store: Store
) -> None:
    matched = _run(client, stub, identical())
    diverged = _run(client, stub, diverging_at_step_2())
    html = client.get(f"/conversations/{STEPS_CONVERSATION}/replays").text
    assert re.findall(r'data-step-run-row="(\w+)" data-step-run-status="(\w+)"', html) == [
        (diverged, "diverged"), (matched, "matched")
    ]  # fmt: skip
    assert f'href="/step-runs/{diverged}?at=2#step-2"' in html
    assert "data-step-compare-form" in html
    compare = client.get("/runs/compare", params={"a": matched, "b": diverged})
    assert compare.status_code == 200
    page = compare.text
    assert "<h1>Two step runs compared</h1>" in page
    assert 'data-first-difference="2"' in page and "same tools, different arguments" in page
    assert re.findall(r'data-compare-row="(\d)" data-agree="(\w+)"', page) == [("1", "yes"), ("2", "no"), ("3", "no"),
                                                                              ("4", "no")]  # fmt: skip
    seats = re.search(r'data-compare-row="2".*?<table class="argdiff[^"]*".*?</table>', page, re.S)
    assert seats is not None and re.search(r"<code>/seats</code>.*?>2</del>.*?>3</ins>", seats.group(0), re.S)
    assert live_content(page) == []
    reply_run = store.start_run(NewRun(CONVERSATION, provider="openai", model="m", request_body={}))
    assert client.get("/runs/compare", params={"a": matched, "b": reply_run.run_id}).status_code == 400


def test_tools_given_in_the_form_are_sent_at_every_step_and_the_run_says_so(
    client: httpx.Client, stub: StubServer
) -> None:
    import json

    tools = [{"type": "function", "function": {"name": n, "description": "given", "parameters": {"type": "object"}}}
             for n in ("search_flights", "book", "weather", "hotel")]  # fmt: skip
    run_id = _run(client, stub, identical(), tools=json.dumps(tools), tool_choice="auto")
    run = client.get(f"/api/step-runs/{run_id}").json()
    assert (run["status"], run["tools_source"], run["tool_choice"]) == ("matched", "given", "auto")
    assert all({t["function"]["description"] for t in r.body["tools"]} == {"given"} for r in stub.state.requests)
    html = client.get(f"/step-runs/{run_id}").text
    assert "tools sent (given for this replay): search_flights, book, weather, hotel; tool choice auto" in html
    assert "data-tools-inferred" not in html


def test_a_tools_field_that_is_not_a_tool_list_is_refused_in_place(client: httpx.Client, stub: StubServer) -> None:
    response = post_steps(client, {**step_form(client), "tools": '{"oops": 1}'}, **HX)
    assert response.status_code == 200 and "the tools field" in response.text and "not a tool list" in response.text
    assert stub.state.requests == []


def test_request_options_in_the_form_are_sent_at_every_step_recorded_and_shown(
    client: httpx.Client, stub: StubServer
) -> None:
    run_id = _run(client, stub, identical(), max_tokens="300", temperature="0.25", stop="END")
    run = client.get(f"/api/step-runs/{run_id}").json()
    assert (run["status"], run["params"]) == ("matched", {"max_tokens": 300, "temperature": 0.25, "stop": ["END"]})
    sent = [(r.body.get("max_completion_tokens", r.body.get("max_tokens")), r.body["temperature"], r.body["stop"])
            for r in stub.state.requests]  # fmt: skip
    assert sent == [(300, 0.25, ["END"])] * 4  # three calls and the final answer
    html = client.get(f"/step-runs/{run_id}").text
    assert "parameters given: max_tokens 300, temperature 0.25, stop &#39;END&#39;" in html


def test_a_request_option_the_model_cannot_take_is_refused_in_place_naming_its_limit(
    client: httpx.Client, stub: StubServer, store: Store
) -> None:
    over = post_steps(client, {**step_form(client), "max_tokens": "999999"}, **HX)
    assert over.status_code == 200 and "data-run-refused" in over.text
    assert "above 32,768, the output limit of gpt-4.1" in over.text
    effort = post_steps(client, {**step_form(client), "effort": "high"}, **HX)
    assert "gpt-4.1 does not reason" in effort.text and "--effort high cannot be sent" in effort.text
    assert stub.state.requests == [] and store.list_step_runs() == ()


def test_the_replay_steps_form_offers_the_request_options(client: httpx.Client) -> None:
    html = client.get(f"/conversations/{STEPS_CONVERSATION}").text
    forms = re.findall(r"<form[^>]*data-steps-form[^>]*>(.*?)</form>", html, re.S)
    assert forms and all(
        f'name="{name}"' in forms[0] for name in ("max_tokens", "temperature", "top_p", "stop", "thinking", "effort")
    )
