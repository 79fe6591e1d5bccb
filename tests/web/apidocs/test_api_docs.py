"""The "API" link opens a page that reads the JSON API: every operation, its parameters and answers, the schemas
they name; served by the dashboard itself (offline, no script), with a way back to the dashboard."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.replay.web_server import serving
from tests.web.test_browser import Visit, Watch, _shot, browser, page, visit  # noqa: F401 - fixtures
from tests.web.web_corpus import every_kind, temp_store
from tests.web.web_html import parse
from web.app import create_app
from web.settings import Settings


def test_the_api_page_lists_every_operation_its_parameters_and_the_schemas(client: TestClient[Litestar]) -> None:
    document = client.get("/schema/openapi.json").json()
    html = client.get("/").text
    (link,) = [el for el in parse(html).elements if el.has("data-api-link")]
    response = client.get(link.get("href") or "")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    shown = parse(response.text)
    listed = {el.get("data-operation") for el in shown.elements if el.has("data-operation")}
    expected = {f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item}
    assert listed == expected
    schemas = {el.get("data-schema") for el in shown.elements if el.has("data-schema")}
    assert schemas == set(document["components"]["schemas"])
    parameters = {el.get("data-parameter") for el in shown.elements if el.has("data-parameter")}
    assert {"q", "cursor", "limit", "conversation_id", "pointer"} <= parameters
    assert "integer 1–500 (default 50)" in shown.text  # the list's limit, in words
    assert "One run: request and response bodies" in shown.text  # what the operation does, from its docstring
    assert "``" not in shown.text  # docstrings read as prose, not reStructuredText
    back = [el.get("href") for el in shown.elements if el.has("data-back")]
    assert back == ["/"]
    assert not [el for el in shown.elements if el.tag == "script" and "vendor/htmx" not in (el.get("src") or "")
                and "/static/app." not in (el.get("src") or "")]  # fmt: skip


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serving(create_app(Settings(), temp_store(every_kind("plain")))) as base_url:
        yield base_url


@pytest.mark.browser
def test_the_api_link_opens_a_readable_page_offline_and_leads_back(visit: Visit) -> None:  # noqa: F811
    pg, watch = visit("/")
    pg.click("[data-api-link]")
    pg.wait_for_url("**/api-docs")
    assert pg.inner_text("h1") == "The JSON API"
    assert pg.locator("[data-operation]").count() >= 10
    # Readable: body text at the page's own size, in the page's own font, not a blank page waiting for a script.
    size = pg.evaluate("parseFloat(getComputedStyle(document.querySelector('.apidocs__what')).fontSize)")
    assert size >= 13
    _shot(pg, "api-docs.png")
    pg.click("[data-back]")
    pg.wait_for_url("**/")
    assert pg.locator("[data-conversations]").count() == 1
    assert watch.clean(), watch  # nothing fetched from another origin: it works offline
