"""The payload page's capability report: the preflight badge or the findings linked to their cards, what the model
cannot carry, the model selector; and the same per side in the diff summary."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER
from core.providers import get_dialect
from tests.web.web_corpus import BASE_URL, temp_store
from tests.web.web_html import parse
from web.app import create_app
from web.devtools import demo_data
from web.settings import Settings

EK = f"/conversations/{demo_data.EVERY_KIND}"


@pytest.fixture
def client() -> Iterator[TestClient[Litestar]]:
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.every_kind()]
    with TestClient(create_app(Settings(), temp_store(messages)), base_url=BASE_URL) as c:
        yield c


def _with(html: str, attr: str) -> list[Any]:
    return [el for el in parse(html).elements if el.has(attr)]


def test_an_accepted_body_shows_the_badge_for_its_model_and_what_it_cannot_carry_once(
    client: TestClient[Litestar],
) -> None:
    html = client.get(f"{EK}/payload/anthropic").text
    (badge,) = _with(html, "data-preflight")
    assert badge.get("data-preflight") == "accepted"
    assert "accepted by the SDK types and provider rules for claude-sonnet-4-6" in html
    # Said once, beside the body: each degradation linked to its card, not again by kind above it.
    elements = set(re.findall(r'<code class="warnings__element">([^<]*)</code>', html))
    assert {"audio", "video", "reasoning"} <= elements
    assert _with(html, "data-cannot-carry") == []
    assert _with(html, "data-findings") == []


def test_the_model_selector_chooses_the_profile_and_keeps_the_provider(client: TestClient[Litestar]) -> None:
    html = client.get(f"{EK}/payload/gemini").text
    assert len(_with(html, "data-model-select")) == 1
    options = [el.get("value") for el in parse(html).elements if el.tag == "option"]
    assert "gemini-3-pro" in options and "" in options
    html = client.get(f"{EK}/payload/gemini?model=gemini-3-pro").text
    (section,) = _with(html, "data-capability")
    assert section.get("data-model") == "gemini-3-pro"
    assert "accepted by the SDK types and provider rules for gemini-3-pro" in html
    selected = [el.get("value") for el in parse(html).elements if el.tag == "option" and el.has("selected")]
    assert "gemini-3-pro" in selected
    api = client.get(f"/api{EK}/payload/gemini?model=gemini-3-pro").json()
    assert api["model"] == "gemini-3-pro" and api["preflight"]["accepted"] is True
    # A provider tab drops the model: a Gemini model means nothing to OpenAI.
    tabs = {el.get("data-provider"): el.get("href") for el in parse(html).elements if el.tag == "a"}
    assert "model=" not in (tabs["openai"] or "") and "model=gemini-3-pro" in (tabs["gemini"] or "")


@pytest.mark.usefixtures("result_before_call")
def test_findings_are_listed_each_linked_to_the_card_it_came_from(client: TestClient[Litestar]) -> None:
    html = client.get(f"{EK}/payload/openai").text
    (badge,) = _with(html, "data-preflight")
    assert badge.get("data-preflight") == "refused"
    findings = [el for el in _with(html, "data-finding") if el.get("data-finding") == "result-before-call"]
    assert findings and findings[0].get("data-severity") == "error"
    cards = {el.get("id") for el in parse(html).elements if el.has("data-msg-id")}
    links = [el.get("data-card") for el in _with(html, "data-card") if el.tag == "a"]
    assert links and set(links) <= cards | {None}
    assert "OpenAI 400" in html


def test_the_diff_summary_has_each_sides_report(client: TestClient[Litestar]) -> None:
    html = client.get(f"{EK}/diff?left=openai&right=gemini").text
    sides = [el.get("data-side-capability") for el in _with(html, "data-side-capability")]
    assert sides == ["left", "right"]
    models = [el.get("data-model") for el in _with(html, "data-capability")]
    assert models == ["gpt-4.1", get_dialect("gemini").default_model]


def test_a_model_name_from_the_url_is_escaped(client: TestClient[Litestar]) -> None:
    html = client.get(f"{EK}/payload/anthropic", params={"model": "<script>alert(1)</script>"}).text
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
