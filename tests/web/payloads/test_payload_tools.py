"""The payload and diff pages' tools section: the stored tools (or the inferred ones) listed, labelled by where they
came from, each linked to its node in the body."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core.store import Store
from tests.replay.replay_data import import_lines
from tests.replay.steps_data import STEPS_CONVERSATION, steps_conversation
from tests.web.web_corpus import BASE_URL
from web.app import create_app
from web.settings import Settings

STORED = "conv-tools-stored"
TOOLS = [
    {"name": "search_flights", "description": "Search flights.", "parameters": {"type": "object", "properties": {}}},
    {"name": "book", "description": "Book a flight.", "parameters": {"type": "object", "properties": {}}},
    {"name": "weather", "description": "Weather.", "parameters": {"type": "object", "properties": {}}},
    {"name": "hotel", "description": "Hotels.", "parameters": {"type": "object", "properties": {}}},
]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient[Litestar]]:
    folder: Path = tmp_path_factory.mktemp("payload-tools")
    context = {"traceloupe_request": {"conversation_id": STORED, "tools": TOOLS, "tool_choice": "auto"}}
    with Store.open(str(folder / "tools.db")) as store:
        import_lines(store, folder / "tools.jsonl", [*steps_conversation(), *steps_conversation(STORED), context])
        with TestClient(create_app(Settings(), store), base_url=BASE_URL) as c:
            yield c


def _section(html: str) -> str:
    found = re.search(r"<section class=\"tools\".*?</section>", html, re.S)
    assert found is not None
    return found.group(0)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini", "openai-responses"])
def test_the_stored_tools_are_listed_labelled_and_linked_to_their_nodes(
    client: TestClient[Litestar], provider: str
) -> None:
    html = client.get(f"/conversations/{STORED}/payload/{provider}").text
    section = _section(html)
    assert 'data-tools-source="stored"' in section and "from the stored request context" in section
    listed = re.findall(r'data-tool="([^"]+)" data-hl="([^"]+)" data-windows="payload-json-w\d+"', section)
    assert listed == [(t["name"], f"tool-{t['name']}") for t in TOOLS]
    # The body marks the tools array and each tool with the same names the list carries.
    assert 'data-ptr="/tools" data-hl="tools"' in html
    assert all(f'data-hl="tool-{t["name"]}"' in html.split('id="payload-json"')[1] for t in TOOLS)


def test_without_stored_tools_the_section_says_they_were_inferred(client: TestClient[Litestar]) -> None:
    section = _section(client.get(f"/conversations/{STEPS_CONVERSATION}/payload/anthropic").text)
    assert 'data-tools-source="inferred"' in section and "inferred from the recorded calls" in section


def test_the_diff_page_lists_each_sides_tools(client: TestClient[Litestar]) -> None:
    html = client.get(f"/conversations/{STORED}/diff", params={"left": "openai", "right": "anthropic"}).text
    sections = re.findall(r"<section class=\"tools\".*?</section>", html, re.S)
    assert len(sections) == 2
    assert "diff-left-w" in sections[0] and "diff-right-w" in sections[1]
    assert all("from the stored request context" in s for s in sections)
