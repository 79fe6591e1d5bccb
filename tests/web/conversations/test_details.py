"""Small things a reader notices: where the runs link goes, a diff of a provider with itself, the import
page's units and count, search snippets, and how long each step took."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from litestar.testing import TestClient

from core.store import NewRun
from tests.web.imports.test_import import GOOD, _post, upstream_upload_leak
from tests.web.web_corpus import BASE_URL, every_kind, make_app, temp_store
from tests.web.web_html import parse
from web.app import create_app
from web.settings import Settings
from web.timeline import Timeline


def test_the_runs_count_in_the_header_opens_the_runs_page() -> None:
    store = temp_store(every_kind("plain"))
    store.start_run(NewRun("c-every", provider="openai", model="gpt-4.1", request_body={}))
    with TestClient(create_app(Settings(), store), base_url=BASE_URL) as client:
        page = parse(client.get("/conversations/c-every").text)
    (link,) = [el for el in page.elements if el.tag == "a" and el.has("data-runs")]
    assert link.get("href") == "/conversations/c-every/replays"


def test_a_diff_of_a_provider_with_itself_lists_each_warning_once() -> None:
    with TestClient(make_app(every_kind("plain")), base_url=BASE_URL) as client:
        html = client.get("/conversations/c-every/diff?left=openai&right=openai&repair=1").text
    warnings = re.findall(r'<ul class="cause__warnings">(.*?)</ul>', html, re.S)
    items = [" ".join(li.split()) for block in warnings for li in re.findall(r"<li>(.*?)</li>", block, re.S)]
    assert items, "every_kind degrades on openai: there are warnings to list"
    assert len(items) == len(set(items)), items


@upstream_upload_leak
def test_the_import_page_says_mib_and_does_not_count_a_no_op_re_import() -> None:
    with TestClient(make_app([]), base_url=BASE_URL) as client:
        form = client.get("/import").text
        assert "Limit: 256.0 MiB per upload" in " ".join(parse(form).text.split())
        status, html = _post(client, [("first.jsonl", GOOD), ("again.jsonl", GOOD)])
    assert status == 200
    summary = re.search(r"<h2 data-import-summary>(.*?)</h2>", html, re.S)
    assert summary is not None
    assert " ".join(summary.group(1).split()) == "1 of 2 files imported · 1 already stored"


@pytest.mark.parametrize(
    ("query", "match"),
    [("rainy", "rainy"), ("RAINY", "rainy"), ("<b>", "<b>")],
)
def test_search_results_show_the_matching_text_marked_and_escaped(query: str, match: str) -> None:
    messages = every_kind("Plan the trip: <b>Lisbon</b> in May, whatever the rainy days bring")
    with TestClient(make_app(messages), base_url=BASE_URL) as client:
        html = client.get("/", params={"q": query}).text
    snippet = re.search(r"<p class=\"snippet\" data-snippet>(.*?)</p>", html, re.S)
    assert snippet is not None, html[-2000:]
    marked = re.findall(r"<mark>(.*?)</mark>", snippet.group(1))
    escaped = match.replace("<", "&lt;").replace(">", "&gt;")
    assert marked == [escaped]
    assert "<b>" not in snippet.group(1)  # trace text is escaped, never markup


def test_each_card_shows_the_time_its_step_took() -> None:
    with TestClient(make_app(every_kind("plain")), base_url=BASE_URL) as client:
        page = parse(client.get("/conversations/c-every").text)
    steps = [el for el in page.elements if el.has("data-step-ms")]
    cards = Timeline(every_kind("plain")).page(0, 100).cards  # the timeline's own cards (not a history's)
    assert len(steps) == len(cards) - 1  # every card but the first
    gaps = [b.create_ts - a.create_ts for a, b in pairwise(cards)]
    assert [int(el.get("data-step-ms") or "") for el in steps] == gaps
    assert all(re.fullmatch(r"-?\d+", el.get("data-step-ms") or "") for el in steps)
    assert {el.get("title") for el in steps} == {"Time since the previous card's stamp"}
