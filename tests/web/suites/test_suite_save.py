"""The list's "save these N as a suite": its filters make the suite, whose page shows it; hostile titles stay text."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from core.store import Store
from core.suites import Suites
from tests.web.suites.conftest import COUNT, HOSTILE_TITLES, add, hostile_id, save, token
from tests.web.web_html import live_content, parse
from web.conversations.pages import save_control
from web.list_query import COUNT_CAP, ListQuery


def test_a_filtered_list_offers_to_save_what_it_matches(client: httpx.Client) -> None:
    html = client.get("/", params={"q": "What is the weather"}).text
    page = parse(html)
    (form,) = [el for el in page.elements if el.tag == "form" and el.has("data-suite-save")]
    assert (form.get("method"), form.get("action")) == ("post", "/suites")
    hidden = {
        el.get("name"): el.get("value") for el in page.elements if el.tag == "input" and el.get("type") == "hidden"
    }
    assert hidden["q"] == "What is the weather" and hidden["_csrf_token"]
    count = COUNT + len(HOSTILE_TITLES)
    assert re.search(rf"Save these <strong data-suite-count>{count}</strong> as a suite", html)
    assert live_content(html) == []


def test_an_unfiltered_or_empty_list_offers_nothing(client: httpx.Client) -> None:
    assert "data-suite-save" not in client.get("/").text
    assert "data-suite-save" not in client.get("/", params={"q": "no conversation says this"}).text


def test_the_count_goes_past_the_lists_first_page(client: httpx.Client, store: Store, tmp_path: Path) -> None:
    more = 60
    add(store, tmp_path / "more.jsonl", {100 + i: (f"more-{i}", "Sixty more:") for i in range(more)})
    html = client.get("/", params={"q": "Sixty more"}).text
    assert "data-next-list" in html  # the list shows one page of 50 ...
    assert "Save these <strong data-suite-count>60</strong>" in html  # ... and the control counts them all
    assert save(client, "sixty", q="Sixty more").status_code == 303
    assert len(Suites(store).get("sixty").conversations) == more


def test_the_count_stops_at_its_cap(store: Store) -> None:
    query = ListQuery(q="What is the weather", limit=2).store_query()
    assert store.count_conversations(query, COUNT_CAP) == COUNT + len(HOSTILE_TITLES)
    assert store.count_conversations(query, 4) == 4
    assert save_control(ListQuery(q="x"), 4, 4).label == "4+"


def test_saving_makes_the_suite_from_the_filters_and_opens_it(client: httpx.Client, store: Store) -> None:
    answer = save(client, "weather", q="weather <<c00", sort="oldest")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/suites/weather"
    suite = Suites(store).get("weather")
    assert suite.filter == {"search": "weather <<c00"}
    assert suite.conversations == tuple(f"suite-conv-{i:03d}" for i in range(COUNT))  # the list's order (oldest)
    page = client.get("/suites/weather").text
    assert f"{COUNT} conversations" in page and "search=&#39;weather &lt;&lt;c00&#39;" in page
    assert 'href="/?q=weather+%3C%3Cc00"' in page  # the list, filtered as the suite was made
    listing = client.get("/suites").text
    assert 'href="/suites/weather"' in listing and "never run" in listing


def test_saving_with_a_kind_or_damaged_filter_keeps_it(client: httpx.Client, store: Store) -> None:
    assert save(client, "tools", kind="tool", damaged="", q="weather").status_code == 303
    assert Suites(store).get("tools").filter == {"search": "weather", "kind": "tool"}


def test_saving_without_the_csrf_token_is_refused(client: httpx.Client, store: Store) -> None:
    token(client)
    answer = client.post("/suites", data={"name": "no-token", "q": "weather"})
    assert answer.status_code == 403
    assert Suites(store).summaries() == ()


def test_a_taken_name_or_no_match_saves_nothing_and_says_why(client: httpx.Client, store: Store) -> None:
    assert save(client, "once", q="weather").status_code == 303
    again = save(client, "once", q="weather")
    assert again.status_code == 400 and "exists already" in again.text
    none = save(client, "empty", q="no conversation says this")
    assert none.status_code == 400 and "no conversation matches" in none.text
    assert [s.name for s in Suites(store).summaries()] == ["once"]


def test_hostile_titles_and_names_are_shown_as_text(client: httpx.Client, store: Store) -> None:
    name = "<img src=x onerror=alert(1)>/.."
    answer = save(client, name, q="What is the weather")
    assert answer.status_code == 303
    location = answer.headers["location"]
    assert location == "/suites/~3Cimg~20src~3Dx~20onerror~3Dalert~281~29~3E~2F.."
    for path in (location, "/suites"):
        html = client.get(path).text
        assert live_content(html) == [], path
        assert "&lt;img src=x onerror=alert(1)&gt;" in html
    suite_page = parse(client.get(location).text)
    for n, title in enumerate(HOSTILE_TITLES):
        assert title in suite_page.text  # shown, as text
        assert any(el.get("data-member") == hostile_id(n) for el in suite_page.elements)


def test_a_hostile_search_travels_as_an_inert_hidden_field(client: httpx.Client, store: Store) -> None:
    search = HOSTILE_TITLES[1][:20]  # '"><img src=x onerror'
    html = client.get("/", params={"q": search}).text
    assert live_content(html) == []
    page = parse(html)
    (field,) = [
        el for el in page.elements if el.tag == "input" and el.get("name") == "q" and el.get("type") == "hidden"
    ]
    assert field.get("value") == search and "Save these <strong data-suite-count>1</strong>" in html
    assert save(client, "hostile-search", q=search).status_code == 303
    assert Suites(store).get("hostile-search").conversations == (hostile_id(1),)


def test_a_broad_filter_reads_as_more_than_the_cap_and_saving_takes_every_match(
    client: httpx.Client, store: Store, tmp_path: Path
) -> None:
    more = COUNT_CAP + 30
    add(store, tmp_path / "many.jsonl", {1000 + i: (f"many-{i}", "Broad filter:") for i in range(more)})
    html = client.get("/", params={"q": "Broad filter"}).text
    assert f"Save these <strong data-suite-count>{COUNT_CAP}+</strong>" in html
    assert "the suite takes every match" in html
    assert save(client, "broad", q="Broad filter").status_code == 303
    assert len(Suites(store).get("broad").conversations) == more
