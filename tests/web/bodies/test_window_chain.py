"""A body of many windows: the first response carries a bounded number of placeholders, the last of which brings the
next ones with its window, a chain that reaches the body's last window (the payload page and both diff panes)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.web.web_corpus import BASE_URL, long_trace, temp_store
from tests.web.web_html import parse
from web.app import create_app
from web.bodies import windows
from web.settings import Settings

CID = "c-chain"
PAYLOAD = f"/conversations/{CID}/payload/openai"
DIFF = f"/conversations/{CID}/diff?left=openai&right=anthropic"
SHOWN = 2


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Litestar]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(windows, "PENDING_SHOWN", SHOWN)
        with TestClient(
            create_app(Settings(), temp_store(long_trace(1_500, conversation_id=CID))), base_url=BASE_URL
        ) as c:
            yield c


PLACEHOLDER = re.compile(
    r'<span class="jw jw--pending" id="([^"]+)-w(\d+)"[^>]*?( data-brings-more)?\s+hx-get="([^"]*)"'
)


def _placeholders(html: str, pane: str) -> list[tuple[int, bool, str]]:
    return [(int(n), bool(more), unescape(url)) for p, n, more, url in PLACEHOLDER.findall(html) if p == pane]


def _pre_text(html: str, pane: str) -> str:
    start = html.index(">", html.index(f'id="{pane}"')) + 1
    return parse(html[start : html.index("</pre>", start)]).text


def _walk(client: TestClient[Litestar], html: str, pane: str) -> tuple[list[int], str]:
    """Every window of ``pane`` loaded as a reader scrolling to the end loads them: (their numbers, in the order
    loaded; the body, window after window)."""
    texts = {0: _pre_text(html, pane)}
    shown = _placeholders(html, pane)
    loaded: list[int] = []
    while shown:
        n, more, url = shown.pop(0)
        assert more == ("then=1" in url)
        fragment = client.get(url, headers={"HX-Request": "true"})
        assert fragment.status_code == 200
        window = fragment.text.split('<span class="jw jw--pending"')[0]
        texts[n] = parse(window).text
        loaded.append(n)
        following = _placeholders(fragment.text, pane)
        assert len(following) <= SHOWN and (following == [] or more)  # a bounded batch, from a chained one only
        shown += following
    return loaded, "".join(texts[n] for n in sorted(texts))


def test_the_payload_windows_chain_to_the_last_one(client: TestClient[Litestar]) -> None:
    page = client.get(PAYLOAD).text
    match = re.search(r'data-body-lines="\d+">[^<]*, ([\d,]+) windows', page)
    assert match is not None
    count = int(match.group(1).replace(",", ""))
    assert count > 2 * SHOWN + 1  # the chain has several links
    assert len(_placeholders(page, "payload-json")) < count - 1  # not one per window
    loaded, text = _walk(client, page, "payload-json")
    assert sorted(loaded) == list(range(1, count))  # each window once
    assert text == json.dumps(client.get(f"/api{PAYLOAD}").json()["body"], indent=2, ensure_ascii=False)


def test_each_diff_pane_chains_to_its_last_window(client: TestClient[Litestar]) -> None:
    page = client.get(DIFF).text
    for side, provider in (("left", "openai"), ("right", "anthropic")):
        loaded, text = _walk(client, page, f"diff-{side}")
        assert len(_placeholders(page, f"diff-{side}")) < len(loaded)  # not one per window
        assert len(loaded) > 2 * SHOWN and sorted(loaded) == list(range(1, len(loaded) + 1))  # each window once
        api = client.get(f"/api/conversations/{CID}/payload/{provider}").json()["body"]
        assert text == json.dumps(api, indent=2, ensure_ascii=False)
