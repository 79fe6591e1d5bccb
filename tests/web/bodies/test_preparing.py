"""A long trace's payload and diff pages before their digest is made: a panel at once, then the page from the digest."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from litestar.testing import TestClient

from tests.web.web_corpus import BASE_URL, long_trace, temp_store
from web.app import create_app
from web.backlog import Backlog
from web.bodies.preparations import Preparations, Step
from web.settings import Settings

CID = "c-prep"
PAGES = {
    "payload": (f"/conversations/{CID}/payload/openai", f"/conversations/{CID}/payload/openai/preparing"),
    "diff": (
        f"/conversations/{CID}/diff?left=openai&right=anthropic",
        f"/conversations/{CID}/diff/preparing?left=openai&right=anthropic",
    ),
}
HTMX = {"HX-Request": "true"}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[object]]:
    app = create_app(Settings(prepare_min_records=200), temp_store(long_trace(300, conversation_id=CID)))
    with TestClient(app, base_url=BASE_URL) as client:
        yield client  # type: ignore[misc]


@pytest.mark.parametrize("page", PAGES)
def test_a_long_trace_s_page_answers_with_its_progress_then_opens_from_the_digest(
    client: TestClient[object], page: str
) -> None:
    url, poll = PAGES[page]
    first = client.get(url)
    assert first.status_code == 200
    assert 'id="digest-preparing"' in first.text and "is being prepared" in first.text
    assert f'hx-get="{poll}"'.replace("&", "&amp;") in first.text
    assert re.search(r'data-percent="\d+"', first.text)

    assert client.app.state.backlog.wait_idle(120)  # type: ignore[attr-defined]
    ready = client.get(poll, headers=HTMX)
    assert ready.headers.get("HX-Refresh") == "true"  # the panel reloads into the page
    opened = client.get(url)
    assert "digest-preparing" not in opened.text
    assert ("payload-json" if page == "payload" else "diff-left") in opened.text


def test_a_conversation_under_the_threshold_is_built_on_its_request() -> None:
    app = create_app(Settings(prepare_min_records=1_000), temp_store(long_trace(300, conversation_id=CID)))
    with TestClient(app, base_url=BASE_URL) as client:
        answer = client.get(PAGES["payload"][0])
        assert "digest-preparing" not in answer.text and "payload-json" in answer.text


def test_a_failed_preparation_leaves_the_page_to_its_request() -> None:
    """A preparation that fails is not started again at every poll: the page builds as a small one's does."""

    def fail() -> None:
        raise RuntimeError("the store went away")

    backlog = Backlog()
    preparations = Preparations(backlog, 0)
    assert preparations.start("k", [Step("failing", 1, fail)]) is not None
    assert backlog.wait_idle(10)
    assert preparations.start("k", [Step("failing", 1, fail)]) is None
    backlog.close()
