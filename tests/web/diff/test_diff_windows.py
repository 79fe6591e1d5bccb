"""The diff page by windows: the summary counts every change and lists them by pages of 50 per cause;
each side's body loads window by window, and each listed change names the windows that hold it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.web.web_corpus import BASE_URL, long_trace, temp_store
from tests.web.web_html import live_content, parse
from web.app import create_app
from web.settings import Settings

CONV = "/conversations/c-big"
DIFF = f"{CONV}/diff?left=openai&right=anthropic"
# Long enough that each side spans several windows, short enough that fetching every window stays cheap.
MID = "/conversations/c-mid"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Litestar]]:
    with TestClient(
        create_app(
            Settings(),
            temp_store([*long_trace(6_000, conversation_id="c-big"), *long_trace(1_000, conversation_id="c-mid")]),
        ),
        base_url=BASE_URL,
    ) as c:
        yield c


@pytest.fixture(scope="module")
def page(client: TestClient[Litestar]) -> str:
    response = client.get(DIFF)
    assert response.status_code == 200
    return response.text


def _listed(html: str) -> list[int]:
    return [int((el.get("data-hl") or "")[4:]) for el in parse(html).elements if el.has("data-change")]


def test_each_cause_is_counted_whole_and_listed_by_pages_of_50(client: TestClient[Litestar], page: str) -> None:
    api = client.get(f"/api{DIFF}").json()
    assert api["causes"]["tools"] > 100
    elements = parse(page).elements
    for cause, count in api["causes"].items():
        group = next(el for el in elements if el.get("data-cause") == cause)
        assert group.get("data-changes") == str(count)  # the summary counts the whole body
        expected = [n for n, c in enumerate(api["changes"]) if c["cause"] == cause]
        start = page.index(f'data-cause="{cause}"')
        listed = _listed(page[start : page.index("</details>", start)])
        assert listed == expected[:50]
        more = re.search(rf'data-more-changes="{cause}">\s*<a href="([^"]+)"', page[start:])
        while more:  # "show 50 more", until the cause is listed whole
            fragment = client.get(unescape(more.group(1)), headers={"HX-Request": "true"}).text
            assert live_content(fragment) == []
            batch = _listed(fragment)
            assert 0 < len(batch) <= 50
            listed += batch
            more = re.search(r'data-more-changes="[^"]+">\s*<a href="([^"]+)"', fragment)
        assert listed == expected


def test_each_side_loads_by_windows_that_concatenate_to_its_body(client: TestClient[Litestar], page: str) -> None:
    assert len(page.encode()) <= 1_000_000
    mid = client.get(f"{MID}/diff?left=openai&right=anthropic").text
    for side, provider in (("left", "openai"), ("right", "anthropic")):
        start = mid.index(">", mid.index(f'id="diff-{side}"')) + 1
        texts = {0: parse(mid[start : mid.index("</pre>", start)]).text}
        placeholder = rf'hx-get="([^"]*/diff/window\?[^"]*side={side}[^"]*)"'
        urls = [unescape(u) for u in re.findall(placeholder, mid)]
        assert len(urls) > 1
        while urls:  # a window's response brings the next placeholders, to the last window
            fragment = client.get(urls.pop(0)).text
            window, _, following = fragment.partition('<span class="jw jw--pending"')
            texts[int(parse(window).elements[0].get("data-window") or "")] = parse(window).text
            urls += [unescape(u) for u in re.findall(placeholder, following)]
        assert sorted(texts) == list(range(len(texts)))
        api = client.get(f"/api{MID}/payload/{provider}").json()["body"]
        assert "".join(texts[n] for n in sorted(texts)) == json.dumps(api, indent=2, ensure_ascii=False)


def test_a_listed_change_names_the_windows_holding_its_marks(client: TestClient[Litestar], page: str) -> None:
    changes = [el for el in parse(page).elements if el.has("data-change")]
    placeholders = {
        el.get("id"): unescape(el.get("hx-get") or "") for el in parse(page).elements if el.has("data-window-pending")
    }
    for change in changes[:: max(1, len(changes) // 10)]:
        number = (change.get("data-hl") or "")[4:]
        for window in (change.get("data-windows") or "").split():
            html = client.get(placeholders[window]).text if window in placeholders else page
            side = "L" if window.startswith("diff-left") else "R"
            assert f'id="{side}{number}"' in html, (window, number)
