"""The payload page, its phases fragment and the payload API, over the demo data set in a real store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER
from core.providers import PHASES, ChatLLM, RequestOptions, dialect_names, provider_named
from tests.web.web_corpus import BASE_URL, temp_store
from tests.web.web_html import live_content, parse
from web.app import create_app
from web.devtools import demo_data
from web.settings import Settings

PROVIDERS = dialect_names()
EK = f"/conversations/{demo_data.EVERY_KIND}"
INC = f"/conversations/{demo_data.INCIDENT}"


@pytest.fixture(scope="module")
def attachments(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("attachments")
    demo_data.write_attachments(root)
    return root


@pytest.fixture(scope="module")
def demo_client(attachments: Path) -> Iterator[TestClient[Litestar]]:
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.every_kind() + demo_data.incident()]
    app = create_app(Settings(attachments_root=attachments), temp_store(messages))
    with TestClient(app, base_url=BASE_URL) as client:
        yield client


def _ids(html: str, attr: str) -> list[str]:
    return [el.get(attr) or "" for el in parse(html).elements if el.has(attr)]


def _element_text(html: str, element_id: str) -> str:
    """The text inside the element with this id (the parser gives text in document order)."""
    start = html.index(f'id="{element_id}"')
    start = html.index(">", start) + 1
    end = html.index("</pre>", start)
    return parse(html[start:end]).text


@pytest.mark.parametrize("provider", PROVIDERS)
def test_payload_page_shows_the_exact_body(demo_client: TestClient[Litestar], provider: str, attachments: Path) -> None:
    response = demo_client.get(f"{EK}/payload/{provider}")
    assert response.status_code == 200
    html = response.text
    api = demo_client.get(f"/api{EK}/payload/{provider}").json()
    # The page's text is the body pretty-printed, character for character: what the copy button copies.
    assert _element_text(html, "payload-json") == json.dumps(api["body"], indent=2, ensure_ascii=False)
    assert 'data-json-complete="true"' in html
    # ... and the body is the adapters' own, with the settings' attachments root.
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.every_kind()]
    expected = ChatLLM(provider_named(provider), RequestOptions(attachments_root=attachments)).construct_request_params(
        messages
    )
    assert api["body"] == expected.body
    assert api["provenance"] == expected.provenance
    # Every provenance pointer is a marked node linked to its card's anchor; every card on the page is one.
    marked = set(_ids(html, "data-ptr"))
    assert {p for ptrs in expected.provenance.values() for p in ptrs} <= marked
    cards = set(_ids(html, "data-msg-id"))
    assert {"ek-u1", "ek-a1", "ek-t1"} <= cards
    linked = {el.get("data-hl") for el in parse(html).elements if el.has("data-ptr")}
    assert "msg-ek-a1" in linked
    # Warnings: each names its msg_id and links to that card.
    warnings = [el for el in parse(html).elements if el.tag == "a" and el.has("data-jump") and el.has("data-hl")]
    assert len(api["warnings"]) >= 1
    assert {w["msg_id"] for w in api["warnings"]} <= {(el.get("href") or "")[5:] for el in warnings} | {None}
    # The switcher links every provider; the upto selector lists the assistant replies.
    assert set(_ids(html, "data-provider")) == set(PROVIDERS)
    options = [el.get("value") for el in parse(html).elements if el.tag == "option"]
    assert {"ek-a1", "ek-a2", "ek-a4", "ek-a5"} <= set(options)
    assert live_content(html) == []


def test_upto_is_the_request_that_produced_a_reply(demo_client: TestClient[Litestar]) -> None:
    full = demo_client.get(f"/api{EK}/payload/openai").json()["body"]
    cut = demo_client.get(f"/api{EK}/payload/openai?upto=ek-a4").json()
    assert cut["upto"] == "ek-a4"
    assert len(cut["body"]["messages"]) < len(full["messages"])
    assert "ek-a4" not in cut["provenance"] and "ek-f1" in cut["provenance"]
    page = demo_client.get(f"{EK}/payload/openai?upto=ek-a4").text
    options = [el for el in parse(page).elements if el.tag == "option" and (el.get("value") or "").startswith("ek-")]
    assert [el.get("value") for el in options if el.has("selected")] == ["ek-a4"]  # the upto selector
    assert demo_client.get(f"{EK}/payload/openai?upto=nope").status_code == 404


def test_attachments_root_reaches_the_adapters(demo_client: TestClient[Litestar]) -> None:
    body = demo_client.get(f"/api{EK}/payload/anthropic").json()
    images = [
        b for m in body["body"]["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
        if b.get("type") == "image"
    ]  # fmt: skip
    assert images and images[0]["source"]["type"] == "base64"  # photos/tram.png, read from under the root


def test_without_an_attachments_root_paths_degrade() -> None:
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.every_kind()]
    with TestClient(create_app(Settings(), temp_store(messages)), base_url=BASE_URL) as client:
        api = client.get(f"/api{EK}/payload/anthropic").json()
        html = client.get(f"{EK}/payload/anthropic").text
    assert any("no attachments root is configured" in w["reason"] for w in api["warnings"])
    assert "--attachments-root" in parse(html).text


def test_damaged_record_shows_the_contract_error(demo_client: TestClient[Litestar]) -> None:
    response = demo_client.get(f"{INC}/payload/openai")
    assert response.status_code == 200
    page = parse(response.text)
    error = next(el for el in page.elements if el.has("data-contract-error"))
    assert error.get("data-msg-id") == "inc-a1"
    assert "助理消息需要子类实现转换过程 (msg_id=inc-a1, role=assistant)" in page.text
    assert "core.errors.ContractError" in page.text
    api = demo_client.get(f"/api{INC}/payload/openai")
    assert api.status_code == 422 and "inc-a1" in api.json()["detail"]
    repair = next(el for el in page.elements if el.has("data-repair-link")).get("href") or ""
    repaired = demo_client.get(repair)
    assert repaired.status_code == 200 and any(el.has("data-repaired") for el in parse(repaired.text).elements)
    assert demo_client.get(f"/api{INC}/payload/openai?repair=1").json()["repaired"] == ["inc-a1", "inc-a2", "inc-u-fwd"]


def test_phases_on_demand(demo_client: TestClient[Litestar]) -> None:
    page = demo_client.get(f"{EK}/payload/gemini").text
    link = next(el for el in parse(page).elements if el.has("data-phases-link"))
    assert link.get("hx-get") == link.get("href") and link.get("hx-target") == "#payload-phases"
    fragment = demo_client.get(link.get("href") or "", headers={"HX-Request": "true"})
    assert fragment.status_code == 200 and fragment.headers["vary"] == "HX-Request"
    assert fragment.text.lstrip().startswith('<div id="payload-phases"')
    phases = _ids(fragment.text, "data-phase")
    assert phases[:6] == list(PHASES)  # the seed's names, in its order (tests/providers/test_phases.py)
    assert "provenance" in phases
    full = demo_client.get(link.get("href") or "")
    assert "<html" in full.text and any(el.get("class") == "topbar" for el in parse(full.text).elements)


def test_unknown_provider_is_a_404_in_the_layout(demo_client: TestClient[Litestar]) -> None:
    response = demo_client.get(f"{EK}/payload/nope")
    assert response.status_code == 404
    assert "unknown provider 'nope'" in parse(response.text).text
    assert demo_client.get(f"/api{EK}/payload/nope").json()["status_code"] == 404


def test_cards_link_to_the_request_that_produced_them(demo_client: TestClient[Litestar]) -> None:
    html = demo_client.get(EK).text
    links = [el.get("href") for el in parse(html).elements if el.has("data-request-link")]
    assert f"{EK}/payload/openai?upto=ek-a1" in links
    assert demo_client.get(links[0] or "").status_code == 200
