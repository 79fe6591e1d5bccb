"""A stub provider per test and the environment that points every dialect at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from web.stub_provider import StubServer

CANARY_KEY = "sk-canary-7f3a9c1e5b"


@pytest.fixture
def stub() -> Iterator[StubServer]:
    server = StubServer().start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def stub_env(stub: StubServer) -> dict[str, str]:
    """Every dialect's key set to the canary and its base URL to the stub."""
    base = stub.base_url
    return {
        "OPENAI_API_KEY": CANARY_KEY, "OPENAI_BASE_URL": f"{base}/v1",
        "ANTHROPIC_API_KEY": CANARY_KEY, "ANTHROPIC_BASE_URL": base,
        "GEMINI_API_KEY": CANARY_KEY, "GEMINI_BASE_URL": base,
        "ZHIPU_API_KEY": CANARY_KEY, "ZHIPU_BASE_URL": f"{base}/api/paas/v4",
        "DOUBAO_API_KEY": CANARY_KEY, "DOUBAO_BASE_URL": f"{base}/api/v3",
    }  # fmt: skip
