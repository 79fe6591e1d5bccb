"""Path attachments: served only from under the attachments root, as downloads; images inline only if they are."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER
from tests.web.web_corpus import BASE_URL, make_app, temp_store
from tests.web.web_html import parse
from web.app import create_app
from web.attachments.files import serve
from web.devtools import demo_data
from web.settings import Settings

SECRET = "TOP-SECRET-SENTINEL"


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("att")
    root = base / "img"
    demo_data.write_attachments(root)
    (base / "secret.txt").write_text(SECRET)
    (base / "img2").mkdir()
    (base / "img2" / "x.txt").write_text(SECRET)  # a sibling whose name starts like the root
    (root / "escape.txt").symlink_to(base / "secret.txt")
    (root / "inside.png").symlink_to(root / "photos" / "tram.png")
    os.mkfifo(root / "fifo")
    return root


@pytest.fixture(scope="module")
def client(layout: Path) -> Iterator[TestClient[Litestar]]:
    with TestClient(create_app(Settings(attachments_root=layout), temp_store()), base_url=BASE_URL) as c:
        yield c


def test_a_file_under_the_root_is_a_download(client: TestClient[Litestar]) -> None:
    response = client.get("/attachments/docs/itinerary.txt")
    assert response.status_code == 200
    assert response.content.startswith(b"Day 1")
    assert response.headers["content-type"] == "application/octet-stream"
    assert response.headers["content-disposition"] == "attachment; filename*=UTF-8''itinerary.txt"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-security-policy"].startswith("sandbox")


@pytest.mark.parametrize(
    "path",
    [
        "%2e%2e/secret.txt",
        "photos/%2e%2e/%2e%2e/secret.txt",
        "%2E%2E/img2/x.txt",
        "..%2fsecret.txt",
        "..%5csecret.txt",
        "photos%00.png",
        "/etc/passwd",
        "%2fetc%2fpasswd",
        "~/secret.txt",
        "C:%5cwindows",
        "escape.txt",  # a symlink inside the root that points outside it
        "fifo",
        "photos/",
        "nothing-here.txt",
    ],
)
def test_traversal_matrix_is_404_and_never_leaks(client: TestClient[Litestar], path: str) -> None:
    response = client.get("/attachments/" + path)
    assert response.status_code == 404, path
    assert SECRET not in response.text


@pytest.mark.parametrize(
    "path", ["../secret.txt", "../img2/x.txt", "photos/../../secret.txt", "/abs", "docs/./itinerary.txt", "docs//x"]
)
def test_dot_segments_refused_before_the_disk(layout: Path, path: str) -> None:
    assert serve(layout, path, inline=False) is None  # raw paths, as a client sending --path-as-is would


def test_symlink_inside_the_root_is_fine(client: TestClient[Litestar]) -> None:
    assert client.get("/attachments/inside.png").status_code == 200


def test_images_inline_only_after_a_magic_byte_check(client: TestClient[Litestar]) -> None:
    png = client.get("/attachments/photos/tram.png?inline=1")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.headers["content-disposition"].startswith("inline")
    svg = client.get("/attachments/photos/evil.svg?inline=1")
    assert svg.status_code == 415 and "onload" not in svg.text
    fake = client.get("/attachments/notes/not-really.png?inline=1")  # HTML named .png
    assert fake.status_code == 415
    assert client.get("/attachments/notes/not-really.png").headers["content-type"] == "application/octet-stream"


def test_no_root_no_files(layout: Path) -> None:
    with TestClient(make_app([]), base_url=BASE_URL) as c:
        response = c.get("/attachments/docs/itinerary.txt")
    assert response.status_code == 404 and "--attachments-root" in response.text


def test_cards_offer_downloads_and_click_to_show(layout: Path) -> None:
    messages = [MESSAGE_ADAPTER.validate_python(m) for m in demo_data.every_kind() + demo_data.hostile()]
    with TestClient(create_app(Settings(attachments_root=layout), temp_store(messages)), base_url=BASE_URL) as c:
        html = c.get(f"/conversations/{demo_data.EVERY_KIND}").text
        hostile = c.get(f"/conversations/{demo_data.HOSTILE}").text
    page = parse(html)
    downloads = {el.get("href") for el in page.elements if el.has("data-attachment-link")}
    assert {"/attachments/photos/tram.png", "/attachments/docs/itinerary.txt"} <= downloads
    shows = {el.get("data-src") for el in page.elements if el.has("data-show-inline")}
    assert "/attachments/photos/tram.png?inline=1" in shows
    assert not any(el.tag == "img" for el in page.elements)  # nothing loads until clicked
    links = {el.get("href") for el in parse(hostile).elements if el.has("data-attachment-link")}
    assert not any(".." in (link or "") for link in links)  # ../../etc/passwd gets no link at all
