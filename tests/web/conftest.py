"""Fixtures for the dashboard tests: an app over the every-kind corpus and a test client on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.web.web_corpus import BASE_URL, make_app


@pytest.fixture
def app() -> Litestar:
    return make_app()


@pytest.fixture
def client(app: Litestar) -> Iterator[TestClient[Litestar]]:
    with TestClient(app, base_url=BASE_URL) as c:
        yield c
