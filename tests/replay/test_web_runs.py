"""Replay in the dashboard: only a same-origin, token-bearing POST starts a run, once per key; failures show."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from core.store import NewRun, Store
from tests.replay.replay_data import CONVERSATION, DAMAGED, FIRST_REPLY, ORIGINAL_TEXT
from tests.replay.web_server import replay_app, serving, settled
from tests.web.web_corpus import csrf_cookie
from tests.web.web_html import live_content, parse
from web.devtools.stub_provider import Reply, StubServer
from web.replays.service import RunService

RUNS = f"/conversations/{CONVERSATION}/runs"
HX = {"HX-Request": "true"}


@pytest.fixture
def env(stub_env: dict[str, str]) -> dict[str, str]:
    """OpenAI, Anthropic and Gemini point at the stub; Zhipu, Doubao and the Responses API have no key."""
    keep = ("OPENAI", "ANTHROPIC", "GEMINI")
    return {k: v for k, v in stub_env.items() if k.startswith(keep)}


@pytest.fixture
def base(store: Store, env: dict[str, str]) -> Iterator[str]:
    service = RunService(store, environ=lambda: env, timeout=1.5)
    with serving(replay_app(store, service)) as url:
        yield url


@pytest.fixture
def client(base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=10) as c:
        yield c


def _form(client: httpx.Client, path: str = f"/conversations/{CONVERSATION}") -> dict[str, str]:
    """The conversation-level form's fields as the page rendered them (token and a fresh key)."""
    html = client.get(path).text
    key = re.search(r'name="idempotency_key" value="([^"]+)"', html)
    assert key is not None
    return {"_csrf_token": csrf_cookie(client.cookies), "idempotency_key": key.group(1)}


AS_TYPED = {"model_as_typed": "1"}
"""The tests' models are the stub's ("stub-slow-4", "m"), typed on purpose as the form's box says."""


def _post(client: httpx.Client, fields: dict[str, str], headers: dict[str, str] | None = None) -> httpx.Response:
    return client.post(RUNS, data={**AS_TYPED, **fields}, headers={"Origin": str(client.base_url), **(headers or {})})


def _wait(client: httpx.Client, run_id: str, timeout: float = 10) -> str:
    """The run's final partial, once its live region stops polling."""
    return settled(client, f"/runs/{run_id}", timeout)


def _run_id(html: str) -> str:
    found = re.search(r'data-run="([0-9a-f]{32})"', html)
    assert found is not None, html[:500]
    return found.group(1)


def test_the_controls_show_availability_and_never_a_key(client: httpx.Client, env: dict[str, str]) -> None:
    html = client.get(f"/conversations/{CONVERSATION}").text
    page = parse(html)
    options = {el.get("value"): el for el in page.elements if el.tag == "option"}
    assert not options["openai"].has("disabled") and options["zhipu"].has("disabled")
    assert "unavailable: set ZHIPU_API_KEY" in html and "unavailable: set DOUBAO_API_KEY" in html
    assert options["anthropic"].get("data-default-model") == "claude-sonnet-4-6"
    # One conversation-level form and one per assistant card, each regenerating its own reply.
    uptos = [el.get("value") for el in page.elements if el.tag == "input" and el.get("name") == "upto"]
    assert uptos == [FIRST_REPLY, "a-2"]
    keys = [el.get("value") for el in page.elements if el.get("name") == "idempotency_key"]
    assert len(keys) == 5 == len(set(keys))  # and two Replay steps forms: the header's and the user card's
    assert live_content(html) == []
    assert env["OPENAI_API_KEY"] not in html


def test_rerun_shows_the_reply_beside_the_original_and_the_diff(client: httpx.Client, stub: StubServer) -> None:
    # A call of the conversation's own tool, which the request offers (inferred from the recorded call).
    stub.state.script.append(Reply(text="Lisbon in May is sunny: about 24 degrees.", tool_calls=[{"name": "weather"}]))
    first = _post(client, {**_form(client), "provider": "anthropic", "model": "claude-x"}, HX)
    assert first.status_code == 200
    run_id = _run_id(first.text)
    assert f'id="run-{run_id}"' in first.text
    assert len(first.headers["x-next-idempotency-key"]) >= 16  # a fresh key for the next press
    html = _wait(client, run_id)
    assert 'data-run-status="ok"' in html
    sides = re.findall(r'data-side="(\w+)"', html)
    assert sides == ["original", "replay"]
    assert ORIGINAL_TEXT in html and "sunny: about 24 degrees." in html
    assert re.search(r"<del[^>]*>warm:</del> <ins[^>]*>sunny:</ins>", html)
    assert "+ /0: {&#34;name&#34;:&#34;weather&#34;" in html  # the replay called a tool the original did not
    assert live_content(html) == []
    (seen,) = stub.state.requests
    assert seen.dialect == "anthropic"


def test_a_plain_form_post_lands_on_the_runs_page(client: httpx.Client) -> None:
    response = _post(client, {**_form(client), "provider": "openai", "model": "gpt-x", "upto": FIRST_REPLY})
    assert response.status_code == 303
    location = response.headers["location"]
    assert re.fullmatch(r"/runs/[0-9a-f]{32}", location)
    page = client.get(location).text
    assert "<h1>Replay</h1>" in page and FIRST_REPLY in page
    replays = client.get(f"/conversations/{CONVERSATION}/replays").text
    assert location.removeprefix("/runs/") in replays


def test_get_never_starts_a_run(client: httpx.Client, store: Store, stub: StubServer) -> None:
    fields = {**_form(client), "provider": "openai", "model": "gpt-x"}
    assert client.get(RUNS, params=fields).status_code == 405
    assert client.head(RUNS).status_code == 405
    assert store.list_runs() == ((), None) and stub.state.requests == []


@pytest.mark.parametrize(
    ("headers", "with_token"),
    [
        ({"Origin": "http://evil.example"}, True),
        ({"Sec-Fetch-Site": "cross-site"}, True),
        ({"Sec-Fetch-Site": "same-site"}, True),
        ({"Origin": "null"}, True),
        ({}, False),
    ],
)
def test_a_cross_site_or_tokenless_post_is_refused(
    client: httpx.Client, store: Store, stub: StubServer, headers: dict[str, str], with_token: bool
) -> None:
    fields = {**_form(client), "provider": "openai", "model": "gpt-x"}
    if not with_token:
        del fields["_csrf_token"]
    response = client.post(RUNS, data=fields, headers={"Origin": str(client.base_url), **headers})
    assert response.status_code == 403
    assert store.list_runs() == ((), None) and stub.state.requests == []


def test_two_concurrent_posts_with_one_key_make_one_provider_call(
    client: httpx.Client, base: str, store: Store, stub: StubServer
) -> None:
    fields = {**_form(client), "provider": "openai", "model": "stub-slow-0.5"}
    cookies = dict(client.cookies)
    barrier = threading.Barrier(4)
    answers: list[str] = []

    def press() -> None:
        with httpx.Client(base_url=base, cookies=cookies, timeout=10) as own:
            barrier.wait()
            answers.append(_run_id(_post(own, fields, HX).text))

    threads = [threading.Thread(target=press) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(answers) == 4 and len(set(answers)) == 1
    assert 'data-run-status="ok"' in _wait(client, answers[0])
    assert len(stub.state.requests) == 1
    assert len(store.list_runs()[0]) == 1


@pytest.mark.parametrize(
    ("model", "status", "words"),
    [
        ("stub-error-500", "http_error", "HTTP 500"),
        ("stub-error-429", "rate_limited", "retry after 1 s"),
        ("stub-slow-4", "timeout", "no answer within the time limit"),
    ],
)
def test_provider_failures_show_in_the_page_and_are_recorded(
    client: httpx.Client, store: Store, model: str, status: str, words: str
) -> None:
    run_id = _run_id(_post(client, {**_form(client), "provider": "openai", "model": model}, HX).text)
    html = _wait(client, run_id)
    assert f'data-run-status="{status}"' in html
    error = re.search(r"<p class=\"run__error\" role=\"alert\" data-run-error>([^<]*)</p>", html)
    assert error is not None and words in error.group(1)
    assert store.get_run(run_id).status == status
    replays = client.get(f"/conversations/{CONVERSATION}/replays").text
    assert status in replays and words in replays


def test_refusals_say_why_and_record_nothing(client: httpx.Client, store: Store, stub: StubServer) -> None:
    refused = _post(client, {**_form(client), "provider": "zhipu", "model": "glm"}, HX)
    assert refused.status_code == 200 and "set ZHIPU_API_KEY" in refused.text and "data-run-refused" in refused.text
    assert _post(client, {**_form(client), "provider": "zhipu", "model": "glm"}).status_code == 400
    assert _post(client, {**_form(client), "provider": "openai", "model": "m", "upto": "nope"}).status_code == 404
    bad_key = {**_form(client), "provider": "openai", "model": "m", "idempotency_key": "short"}
    assert _post(client, bad_key).status_code == 400
    assert _post(client, {**_form(client), "provider": "nope", "model": "m"}).status_code == 400
    assert store.list_runs() == ((), None) and stub.state.requests == []


def test_a_damaged_history_is_a_recorded_refusal_in_the_page(client: httpx.Client, stub: StubServer) -> None:
    path = f"/conversations/{DAMAGED}"
    response = client.post(
        f"{path}/runs",
        data={**_form(client, path), **AS_TYPED, "provider": "openai", "model": "m"},
        headers={"Origin": str(client.base_url), **HX},
    )
    html = _wait(client, _run_id(response.text))
    assert 'data-run-status="refused"' in html and "TFROB-299" in html
    assert stub.state.requests == []


def test_compare_two_runs(client: httpx.Client, stub: StubServer) -> None:
    stub.state.script += [Reply(text="one two three"), Reply(text="one 2 three", tool_calls=[{"name": "t"}])]
    a = _run_id(_post(client, {**_form(client), "provider": "openai", "model": "a"}, HX).text)
    _wait(client, a)
    b = _run_id(_post(client, {**_form(client), "provider": "gemini", "model": "b"}, HX).text)
    _wait(client, b)
    replays = client.get(f"/conversations/{CONVERSATION}/replays").text
    assert "data-compare-form" in replays
    html = client.get("/runs/compare", params={"a": a, "b": b}).text
    assert re.search(r"<del[^>]*>two</del> <ins[^>]*>2</ins>", html)
    requests_url = re.search(r'hx-get="([^"]+)"', html)
    assert requests_url is not None and "data-request-diff-pending" in html
    requests_diff = client.get(requests_url.group(1).replace("&amp;", "&"), headers=HX).text
    assert "data-request-diff" in requests_diff  # an OpenAI body and a Gemini body differ
    assert requests_diff.lstrip().startswith('<div id="request-diff"')  # the fragment that replaces the placeholder
    assert "data-request-diff" in client.get(requests_url.group(1).replace("&amp;", "&")).text  # without JavaScript
    api: Any = client.get(f"/api/conversations/{CONVERSATION}/runs").json()
    assert [r["run_id"] for r in api["runs"]] == [b, a]
    assert client.get(f"/api/runs/{a}").json()["reply"]["content"] == "one two three"


def test_a_run_left_running_by_a_stopped_server_stops_polling(client: httpx.Client, store: Store) -> None:
    orphan = store.start_run(NewRun(CONVERSATION, provider="openai", model="m", request_body={}, started_at=1_000))
    html = client.get(f"/runs/{orphan.run_id}", headers=HX).text
    assert "hx-trigger" not in html and "data-run-stale" in html
    fresh = store.start_run(NewRun(CONVERSATION, provider="openai", model="m", request_body={}))
    assert 'hx-trigger="every 1s"' in client.get(f"/runs/{fresh.run_id}", headers=HX).text


def test_a_key_of_another_conversations_run_is_refused(client: httpx.Client, stub: StubServer) -> None:
    fields = {**_form(client), **AS_TYPED, "provider": "openai", "model": "m"}
    first = _post(client, fields)
    assert first.status_code == 303
    other = client.post(f"/conversations/{DAMAGED}/runs", data=fields, headers={"Origin": str(client.base_url)})
    assert other.status_code == 409 and "another conversation" in other.text
    assert _post(client, fields).headers["location"] == first.headers["location"]  # same key, same run


def test_the_original_card_of_a_run_links_its_tool_results_in_the_conversation(
    client: httpx.Client, store: Store
) -> None:
    run = store.start_run(
        NewRun(CONVERSATION, provider="openai", model="gpt-4.1", request_body={}, up_to_msg_id=FIRST_REPLY)
    )
    store.finish_run(run.run_id, status="http_error", error="HTTP 500")
    html = client.get(f"/runs/{run.run_id}").text
    original = html[html.index('data-side="original"') : html.index('data-side="replay"')]
    assert "no result in this conversation" not in original
    link = re.search(r'<a class="jump" href="([^"]+)" data-jump data-card="([^"]+)" data-jump-result>', original)
    assert link is not None, original
    assert link.group(1) == f"/conversations/{CONVERSATION}?at=msg-t-1#result-t-1-call-1"
    assert link.group(2) == "msg-t-1"
    # The link lands: the page it names holds the result.
    assert 'id="result-t-1-call-1"' in client.get(link.group(1).split("#")[0]).text


def test_a_model_of_another_provider_is_refused_unless_typed_on_purpose(
    client: httpx.Client, store: Store, stub: StubServer
) -> None:
    # gpt-4.1 to Gemini is what a form shows when its model missed a provider change (Back, bfcache).
    fields = {**_form(client), "provider": "gemini", "model": "gpt-4.1"}
    headers = {"Origin": str(client.base_url)}
    refused = client.post(RUNS, data=fields, headers={**headers, **HX})
    assert refused.status_code == 200 and "data-run-refused" in refused.text
    assert "not a gemini model" in refused.text and "as typed" in refused.text
    assert client.post(RUNS, data=fields, headers=headers).status_code == 400
    assert store.list_runs() == ((), None) and stub.state.requests == []

    run_id = _run_id(client.post(RUNS, data={**fields, **AS_TYPED}, headers={**headers, **HX}).text)
    html = _wait(client, run_id)
    warning = re.search(r"data-model-warning>([^<]*)<", html)
    assert warning is not None and "not a known gemini model name" in warning.group(1)
    assert [r.dialect for r in stub.state.requests] == ["gemini"]

    stub.state.requests.clear()
    known = {**_form(client), "provider": "gemini", "model": "gemini-2.5-pro"}  # a Gemini name needs no box
    html = _wait(client, _run_id(client.post(RUNS, data=known, headers={**headers, **HX}).text))
    assert 'data-run-status="ok"' in html and "data-model-warning" not in html


def test_run_compare_says_when_the_runs_regenerated_different_messages(client: httpx.Client, store: Store) -> None:
    runs = [
        store.start_run(NewRun(CONVERSATION, provider="openai", model="gpt-4.1", request_body={}, up_to_msg_id=upto))
        for upto in (FIRST_REPLY, "a-2", "a-2")
    ]
    for run in runs:
        store.finish_run(run.run_id, status="http_error", error="HTTP 500")
    unlike = client.get("/runs/compare", params={"a": runs[0].run_id, "b": runs[1].run_id}).text
    note = re.search(r"data-different-targets>(.*?)</p>", unlike, re.S)
    assert note is not None
    assert "A regenerated <code>a-1</code>, B regenerated <code>a-2</code>" in " ".join(note.group(1).split())
    alike = client.get("/runs/compare", params={"a": runs[1].run_id, "b": runs[2].run_id}).text
    assert "data-different-targets" not in alike


def test_a_run_stored_with_an_unreadable_reply_still_opens(client: httpx.Client, store: Store) -> None:
    # A database written before the reply was redacted value by value can hold such a run.
    broken = {"role": "assistant", "msg_type": "te[redacted]t", "content": "hi", "msg_id": "r", "conversation_id": "c"}
    ids = []
    for _ in range(2):
        run, _ = store.claim_run(NewRun(CONVERSATION, provider="openai", model="m", request_body={}, up_to_msg_id=None))
        ids.append(store.finish_run(run.run_id, status="ok", reply=broken).run_id)
    for path in (f"/runs/{ids[0]}", f"/api/runs/{ids[0]}", f"/runs/compare?a={ids[0]}&b={ids[1]}"):
        assert client.get(path).status_code == 200, path
