"""The diff page and API: both bodies side by side, every change marked in both panes and grouped by cause."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER
from tests.web.web_corpus import BASE_URL, temp_store
from tests.web.web_html import live_content, parse
from web import demo_data
from web.app import create_app
from web.settings import Settings

EK = f"/conversations/{demo_data.EVERY_KIND}"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Litestar]]:
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.every_kind() + demo_data.incident()]
    with TestClient(create_app(Settings(), temp_store(messages)), base_url=BASE_URL) as c:
        yield c


def test_changes_are_marked_in_both_panes_and_grouped_by_cause(client: TestClient[Litestar]) -> None:
    response = client.get(f"{EK}/diff?left=openai&right=anthropic")
    assert response.status_code == 200
    html = response.text
    page = parse(html)
    api = client.get(f"/api{EK}/diff?left=openai&right=anthropic").json()
    changes = api["changes"]
    assert changes
    causes = {el.get("data-cause") for el in page.elements if el.has("data-cause")}
    assert {"system", "tools", "reasoning", "modality"} <= causes
    assert set(api["causes"]) <= causes
    # The system prompt moved out of the message list into a top-level field: both sides under "system".
    system = [c for c in changes if c["cause"] == "system"]
    assert {(c["op"], c["pointer"]) for c in system} >= {("add", "/system"), ("remove", "/messages/0")}
    # Reasoning openai drops (ek-a4's, warned on both sides); tool calls that become tool_use blocks.
    assert any(c["cause"] == "reasoning" and c["pointer"].startswith("/messages/") for c in changes)
    assert any(c["cause"] == "tools" and "tool_use" in str(c.get("right")) for c in changes)
    # Every change has its node in the pane(s) it concerns: L<n> left (removed, changed), R<n> right (added, changed).
    ids = {el.get("id") for el in page.elements if el.get("id")}
    for n, change in enumerate(changes):
        if change["op"] != "add":
            assert f"L{n}" in ids, change
        if change["op"] != "remove":
            assert f"R{n}" in ids, change
    marks = {el.get("class") for el in page.elements if el.has("data-ptr") and el.get("id")}
    assert {"mk d-add", "mk d-remove", "mk d-change"} <= marks
    # Turns are paired by the message they came from, not by index: ek-u1's turn is compared with ek-u1's.
    assert not any(c["pointer"] == "/messages/1/role" for c in changes)
    # Each group explains itself.
    assert "Providers put the system prompt in different places" in page.text
    assert live_content(html) == []


def test_same_provider_is_identical(client: TestClient[Litestar]) -> None:
    page = parse(client.get(f"{EK}/diff?left=gemini&right=gemini").text)
    assert any(el.has("data-no-difference") for el in page.elements)
    assert client.get(f"/api{EK}/diff?left=gemini&right=gemini").json()["changes"] == []


def test_a_damaged_conversation_says_why_and_offers_the_repair(client: TestClient[Litestar]) -> None:
    conv = f"/conversations/{demo_data.INCIDENT}"
    page = parse(client.get(f"{conv}/diff?left=openai&right=zhipu").text)
    assert any(el.has("data-contract-error") for el in page.elements)
    repair = next(el for el in page.elements if el.has("data-repair-link")).get("href") or ""
    assert repair.startswith(f"{conv}/diff?") and "repair=1" in repair
    fixed = client.get(repair)
    assert fixed.status_code == 200 and any(el.has("data-diff-summary") for el in parse(fixed.text).elements)
    assert client.get(f"/api{conv}/diff?left=openai&right=zhipu").status_code == 422


def test_unknown_side_is_a_404(client: TestClient[Litestar]) -> None:
    assert client.get(f"{EK}/diff?left=openai&right=nope").status_code == 404
    assert client.get(f"/api{EK}/diff?left=nope&right=openai").status_code == 404
