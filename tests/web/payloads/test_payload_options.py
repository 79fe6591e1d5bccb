"""The payload page's request options: a GET form whose values rebuild the body over the recorded request, each
checked against the model table and refused in place, never written into the plain page's stored digest."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core.store import Store
from core.store.digests import count_digests
from tests.replay.replay_data import import_lines
from tests.replay.steps_data import steps_conversation
from tests.web.web_corpus import BASE_URL
from tests.web.web_html import live_content, parse
from web.app import create_app
from web.bodies.requests import payload_command
from web.request_options import read_options
from web.settings import Settings

CID = "conv-options"
PAGE = f"/conversations/{CID}/payload/anthropic"
API = f"/api/conversations/{CID}/payload/anthropic"
MODEL = "claude-sonnet-4-5"
"""The model table gives it an output limit of 64,000."""
TOOLS = [{"name": "search_flights", "description": "Search.", "parameters": {"type": "object", "properties": {}}}]
RECORDED = {"max_tokens": 1000, "temperature": 0.5}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    folder: Path = tmp_path_factory.mktemp("payload-options")
    context = {"traceloupe_request": {"conversation_id": CID, "tools": TOOLS, "params": RECORDED}}
    with Store.open(str(folder / "options.db")) as opened:
        import_lines(opened, folder / "options.jsonl", [*steps_conversation(CID), context])
        yield opened


@pytest.fixture(scope="module")
def client(store: Store) -> Iterator[TestClient[Litestar]]:
    with TestClient(create_app(Settings(), store), base_url=BASE_URL) as c:
        yield c


def _body(client: TestClient[Litestar], query: str = "") -> dict[str, Any]:
    response = client.get(f"{API}?model={MODEL}{query}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()["body"]
    return body


def _pane(html: str) -> dict[str, Any]:
    """The body the page shows, parsed back from its highlighted text (one window: a small conversation)."""
    found = re.search(r'<pre class="json" id="payload-json".*?>(.*?)</pre>', html, re.S)
    assert found is not None
    text = re.sub(r"<[^>]+>", "", found.group(1))
    shown: dict[str, Any] = json.loads(text.replace("&#34;", '"').replace("&#39;", "'").replace("&amp;", "&"))
    return shown


def test_the_recorded_request_gives_the_defaults_and_the_model_its_limit(client: TestClient[Litestar]) -> None:
    html = client.get(f"{PAGE}?model={MODEL}").text
    form = html.split("data-options-form", 1)[1].split("</form>", 1)[0]
    assert "from the recorded request: 1,000" in form and "from the recorded request: 0.5" in form
    assert "max 64,000 for claude-sonnet-4-5" in form
    assert _pane(html)["max_tokens"] == 1000 and _pane(html)["temperature"] == 0.5
    assert live_content(html) == []


def test_the_options_given_are_applied_to_the_body(client: TestClient[Litestar]) -> None:
    query = "&max_tokens=2000&temperature=0.25&stop=END%0A%5Cn&thinking=off"
    html = client.get(f"{PAGE}?model={MODEL}{query}").text
    shown = _pane(html)
    assert shown["max_tokens"] == 2000 and shown["temperature"] == 0.25
    assert shown["stop_sequences"] == ["END", "\n"]
    assert shown == _body(client, query)
    assert "data-options-applied" in html
    # Every link of the page keeps the options: another provider, the download, the windows, the phases.
    links = {el.get("href") for el in parse(html).elements if el.has("data-download-json") or el.has("data-provider")}
    assert links and all("max_tokens=2000" in (link or "") for link in links if link)


def test_a_value_out_of_range_is_said_beside_its_field_and_the_recorded_body_shown(
    client: TestClient[Litestar],
) -> None:
    response = client.get(f"{PAGE}?model={MODEL}&max_tokens=999999&top_p=2")
    assert response.status_code == 200
    errors = dict(re.findall(r'data-option-error="(\w+)">([^<]+)<', response.text))
    assert errors["max_tokens"].startswith("max tokens: 999,999 is above 64,000, the output limit of claude-sonnet-4-5")
    assert "range 1 to 64,000" in errors["max_tokens"]
    assert errors["top_p"] == "top_p: 2 is out of range (0 to 1)"
    assert _pane(response.text)["max_tokens"] == 1000  # not applied: the recorded request's body
    assert client.get(f"{API}?model={MODEL}&max_tokens=0").status_code == 400


def test_the_builders_fix_shows_in_the_warnings(client: TestClient[Litestar]) -> None:
    html = client.get(f"{PAGE}?model={MODEL}&temperature=1.5").text
    assert _pane(html)["temperature"] == 1
    warnings = html.split('id="payload-warnings"', 1)[1].split("</section>", 1)[0]
    assert "temperature 1.5 is outside this provider&#39;s range 0-1; sent as 1" in warnings


def test_tools_sent_as_recorded_inferred_or_none(client: TestClient[Litestar]) -> None:
    assert [t["name"] for t in _body(client)["tools"]] == ["search_flights"]
    inferred = [t["name"] for t in _body(client, "&tools_source=inferred")["tools"]]
    assert inferred == ["search_flights", "book", "weather", "hotel"]
    assert "tools" not in _body(client, "&tools_source=none")


def test_htmx_aimed_at_the_panel_gets_the_panel_alone(client: TestClient[Litestar]) -> None:
    headers = {"HX-Request": "true", "HX-Target": "payload-panel"}
    fragment = client.get(f"{PAGE}?model={MODEL}&max_tokens=1234", headers=headers).text
    assert "<html" not in fragment and 'id="payload-json"' in fragment and "data-options-form" in fragment
    assert _pane(fragment)["max_tokens"] == 1234


def test_an_options_body_never_reaches_the_stored_digests(client: TestClient[Litestar], store: Store) -> None:
    client.get(f"{PAGE}?model={MODEL}")
    plain = count_digests(store.engine, CID, "payload")
    html = client.get(f"{PAGE}?model={MODEL}&max_tokens=4321").text
    assert _pane(html)["max_tokens"] == 4321
    assert count_digests(store.engine, CID, "payload") == plain
    assert _pane(client.get(f"{PAGE}?model={MODEL}").text)["max_tokens"] == 1000


def test_the_command_line_named_past_the_time_budget_carries_the_options() -> None:
    asked = read_options({"max_tokens": "50", "stop": "a\nb", "thinking": "on"})
    command = payload_command("c", "anthropic", None, options=asked)
    assert command.endswith("--max-tokens 50 --stop a --stop b --thinking on")


def test_a_hostile_value_comes_back_escaped(client: TestClient[Litestar]) -> None:
    hostile = '"><script>alert(1)</script>'
    html = client.get(PAGE, params={"model": MODEL, "stop": hostile, "temperature": hostile}).text
    assert "<script>alert(1)" not in html
    assert "&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert live_content(html) == []


def test_options_on_a_long_trace_are_built_on_the_request_under_the_time_budget() -> None:
    from tests.web.web_corpus import long_trace, temp_store

    long_id = "c-long-options"
    url = f"/conversations/{long_id}/payload/openai?max_tokens=777"
    store = temp_store(long_trace(300, conversation_id=long_id))
    with TestClient(create_app(Settings(prepare_min_records=200), store), base_url=BASE_URL) as c:
        answer = c.get(url).text
        assert "digest-preparing" not in answer and "tokens&#34;: 777," in re.sub(r"<[^>]+>", "", answer)
    # Past the budget: the 503 names the command line that builds the same body, options included.
    stopped = create_app(Settings(prepare_min_records=200, heavy_budget_seconds=0.001), store)
    with TestClient(stopped, base_url=BASE_URL) as c:
        answer = c.get(url.replace("777", "778"))
        assert answer.status_code == 503 and "--max-tokens 778" in answer.text
