"""The diff page's request options: both bodies rebuilt with them, max tokens checked against both sides' models,
an error said in place, and the stored diff digests left as the plain page made them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core.store import Store
from core.store.digests import count_digests
from tests.replay.replay_data import import_lines
from tests.replay.steps_data import steps_conversation
from tests.web.web_corpus import BASE_URL
from tests.web.web_html import live_content
from web.app import create_app
from web.settings import Settings

CID = "conv-diff-options"
PAGE = f"/conversations/{CID}/diff?left=openai&right=anthropic"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    folder: Path = tmp_path_factory.mktemp("diff-options")
    context = {"traceloupe_request": {"conversation_id": CID, "params": {"max_tokens": 1000}}}
    with Store.open(str(folder / "options.db")) as opened:
        import_lines(opened, folder / "options.jsonl", [*steps_conversation(CID), context])
        yield opened


@pytest.fixture(scope="module")
def client(store: Store) -> Iterator[TestClient[Litestar]]:
    with TestClient(create_app(Settings(), store), base_url=BASE_URL) as c:
        yield c


def _pane(html: str, side: str) -> str:
    found = re.search(rf'<pre class="json json--pane" id="diff-{side}".*?</pre>', html, re.S)
    assert found is not None
    return re.sub(r"<[^>]+>", "", found.group(0))


def test_both_bodies_are_built_with_the_options(client: TestClient[Litestar], store: Store) -> None:
    client.get(PAGE)
    plain = count_digests(store.engine, CID, "diff")
    html = client.get(f"{PAGE}&max_tokens=777&temperature=0.3").text
    assert "data-options-applied" in html and "from the recorded request: 1,000" in html
    for side in ("left", "right"):
        pane = _pane(html, side)
        assert ": 777," in pane and ": 0.3" in pane, side
    assert count_digests(store.engine, CID, "diff") == plain
    assert ": 1000," in _pane(client.get(PAGE).text, "right")
    assert live_content(html) == []


def test_max_tokens_is_checked_against_each_sides_model(client: TestClient[Litestar]) -> None:
    html = client.get(f"{PAGE}&max_tokens=40000").text
    errors = dict(re.findall(r'data-option-error="(\w+)">([^<]+)<', html))
    assert errors["max_tokens"].startswith("max tokens: 40,000 is above 32,768, the output limit of gpt-4.1 (openai)")
    assert "data-options-applied" not in html
    api = client.get(f"/api/conversations/{CID}/diff?left=openai&right=anthropic&max_tokens=40000")
    assert api.status_code == 400 and "gpt-4.1" in api.json()["detail"]


def test_htmx_aimed_at_the_panel_gets_the_panel_alone(client: TestClient[Litestar]) -> None:
    headers = {"HX-Request": "true", "HX-Target": "diff-panel"}
    fragment = client.get(f"{PAGE}&max_tokens=555", headers=headers).text
    assert "<html" not in fragment and 'id="diff-left"' in fragment and ": 555," in _pane(fragment, "left")
