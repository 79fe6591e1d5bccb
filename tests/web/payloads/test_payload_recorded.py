"""The payload page of a conversation imported from a provider log: the recorded request beside the built one,
every difference labelled with the documented normalisation that explains it, or as not one; escaped."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core.store import Store
from tests.web.web_corpus import BASE_URL
from tests.web.web_html import live_content
from web.app import create_app
from web.cli import main
from web.settings import Settings

DATA = Path(__file__).parents[2] / "formats" / "data" / "provider_logs"
CASSETTE = DATA / "anthropic" / "test_anthropic_tool_output.yaml"
"""Two recorded Anthropic requests: the second resends a tool result with ``is_error: false``."""
ASKED = "What is the largest city in the user country?"
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def _hostile_log(folder: Path) -> Path:
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 64,
        "metadata": {"user_id": HOSTILE},
        "messages": [{"role": "user", "content": f"Say {HOSTILE}"}],
    }
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": HOSTILE}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 5, "output_tokens": 5},
    }
    path = folder / "hostile.jsonl"
    path.write_text(json.dumps({"request": request, "response": response}) + "\n")
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    folder: Path = tmp_path_factory.mktemp("payload-recorded")
    url = f"sqlite:///{folder / 'recorded.db'}"
    assert main(["import", "--from", "provider-log", str(CASSETTE), str(_hostile_log(folder)), "--db", url]) == 0
    with Store.open(url) as opened:
        yield opened


@pytest.fixture(scope="module")
def client(store: Store) -> Iterator[TestClient[Litestar]]:
    with TestClient(create_app(Settings(), store), base_url=BASE_URL) as c:
        yield c


def _replies(store: Store, text: str) -> tuple[str, list[str]]:
    """The conversation whose first user text holds ``text``, and its replies' msg_ids."""
    for line in store.export_texts():
        message: dict[str, Any] = json.loads(line)
        if message["role"] == "user" and text in str(message["content"]):
            records = message["intermediate_trace"]["records"]
            return message["conversation_id"], [r["msg_id"] for r in records if r["role"] == "assistant"]
    raise AssertionError(text)


def _panel(html: str) -> str:
    found = re.search(r'<section class="recorded" id="recorded-request".*?</section>', html, re.S)
    assert found is not None, "no recorded-request panel"
    return found.group(0)


def test_a_replys_recorded_request_is_compared_with_the_built_one(client: TestClient[Litestar], store: Store) -> None:
    cid, replies = _replies(store, ASKED)
    html = client.get(f"/conversations/{cid}/payload/anthropic", params={"upto": replies[1]}).text
    panel = _panel(html)
    assert 'data-unexplained="0"' in panel
    labels = re.findall(r"normalisation: ([^<]+)</span>", panel)
    assert "streamed call" in labels and "is_error false omitted" in labels
    assert panel.count("data-recorded-difference=") == len(labels)
    assert "data-recorded-body" in panel and "data-built-body" in panel


def test_an_option_that_changes_the_body_is_a_difference_no_normalisation_explains(
    client: TestClient[Litestar], store: Store
) -> None:
    cid, replies = _replies(store, ASKED)
    params = {"upto": replies[0], "model": "claude-sonnet-4-5", "temperature": "0.9"}
    panel = _panel(client.get(f"/conversations/{cid}/payload/anthropic", params=params).text)
    assert 'data-unexplained="1"' in panel
    [real] = re.findall(r'<li[^>]*data-normalised="false".*?</li>', panel, re.S)
    assert "added /temperature" in real and "0.9" in real and "not a documented normalisation" in real
    # The options form swaps the payload panel alone (htmx): the recorded request comes with it.
    swapped = client.get(
        f"/conversations/{cid}/payload/anthropic",
        params=params,
        headers={"HX-Request": "true", "HX-Target": "payload-panel"},
    ).text
    assert "<html" not in swapped and 'data-unexplained="1"' in _panel(swapped)


def test_another_providers_page_links_to_the_recorded_providers_and_a_page_without_a_step_has_no_panel(
    client: TestClient[Litestar], store: Store
) -> None:
    cid, replies = _replies(store, ASKED)
    html = client.get(f"/conversations/{cid}/payload/openai", params={"upto": replies[0]}).text
    assert "data-recorded-request" not in html and "data-recorded-elsewhere" in html
    plain = client.get(f"/conversations/{cid}/payload/anthropic").text
    assert "data-recorded-request" not in plain and "data-recorded-elsewhere" not in plain


def test_recorded_and_built_bodies_are_shown_escaped(client: TestClient[Litestar], store: Store) -> None:
    cid, replies = _replies(store, HOSTILE)
    html = client.get(f"/conversations/{cid}/payload/anthropic", params={"upto": replies[0]}).text
    panel = _panel(html)
    assert HOSTILE not in html
    assert HOSTILE in unescape(panel)  # the metadata removed (unmodelled) and both bodies' message, as text
    assert "unmodelled field" in panel
    assert live_content(html) == []


def test_the_payload_api_gives_the_recorded_request_and_its_differences(
    client: TestClient[Litestar], store: Store
) -> None:
    cid, replies = _replies(store, ASKED)
    answer = client.get(f"/api/conversations/{cid}/payload/anthropic", params={"upto": replies[1]}).json()
    recorded = answer["recorded"]
    assert recorded["provider"] == "anthropic" and recorded["unexplained"] == 0
    assert ASKED in json.dumps(recorded["body"])
    by_path = {d["path"]: d for d in recorded["differences"]}
    assert by_path["/stream"]["normalisation"] == "streamed call" and by_path["/stream"]["recorded"] is False
    assert "is_error false omitted" in {d["normalisation"] for d in recorded["differences"]}
    # An option that changes the body is a difference no normalisation explains; another provider has none.
    params = {"upto": replies[0], "model": "claude-sonnet-4-5", "temperature": "0.9"}
    changed = client.get(f"/api/conversations/{cid}/payload/anthropic", params=params).json()["recorded"]
    [real] = [d for d in changed["differences"] if d["normalisation"] is None]
    assert (real["path"], real["kind"], real["built"]) == ("/temperature", "added", 0.9)
    other = client.get(f"/api/conversations/{cid}/payload/openai", params={"upto": replies[0]}).json()
    assert other["recorded"] is None
