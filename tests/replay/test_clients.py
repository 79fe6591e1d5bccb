"""Kept SDK clients: one per (SDK, base URL, key, timeout), shared by sends, idle ones past the bound closed."""

from __future__ import annotations

import gc
import threading
import warnings
from typing import Any

import pytest

import core.replay.send as send_module
from core.providers import get_dialect
from core.replay import clients
from core.replay.clients import ClientCache
from core.replay.endpoints import Endpoint, endpoint_for
from core.replay.send import send
from tests.replay.conftest import CANARY_KEY
from tests.replay.test_send import BODIES
from web.devtools.stub_provider import StubServer


def _endpoint(stub_env: dict[str, str], dialect: str = "openai", key: str = CANARY_KEY) -> Endpoint:
    endpoint = endpoint_for(get_dialect(dialect), {**stub_env, "OPENAI_API_KEY": key})
    assert endpoint is not None
    return endpoint


def test_sends_of_one_endpoint_build_one_client(
    stub: StubServer, stub_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[Any] = []
    build = clients.build_client

    def counting(endpoint: Endpoint, timeout: float) -> Any:
        built.append(build(endpoint, timeout))
        return built[-1]

    monkeypatch.setattr(clients, "build_client", counting)
    monkeypatch.setattr(clients, "CLIENTS", ClientCache())
    monkeypatch.setattr(send_module, "CLIENTS", clients.CLIENTS)
    outcomes = [send(_endpoint(stub_env), "m", BODIES["openai"], timeout=10).status for _ in range(3)]
    assert outcomes == ["ok"] * 3
    assert len(built) == 1
    clients.CLIENTS.close()


@pytest.mark.parametrize(
    ("change", "shared"),
    [
        ({}, True),
        ({"dialect": "openai-responses"}, True),  # one OpenAI client speaks both APIs
        ({"key": CANARY_KEY + "-other"}, False),
        ({"timeout": 5.0}, False),
        ({"dialect": "anthropic"}, False),
    ],
)
def test_a_client_is_named_by_sdk_base_url_key_and_timeout(
    change: dict[str, Any], shared: bool, stub: StubServer, stub_env: dict[str, str]
) -> None:
    cache = ClientCache()
    base = _endpoint(stub_env)
    other = _endpoint(stub_env, change.get("dialect", "openai"), change.get("key", CANARY_KEY))
    with cache.client(base, 10.0) as one, cache.client(other, change.get("timeout", 10.0)) as two:
        assert (one is two) is shared
    cache.close()


def test_the_key_names_a_client_by_digest_only(stub_env: dict[str, str]) -> None:
    cache = ClientCache()
    with cache.client(_endpoint(stub_env), 10.0):
        assert CANARY_KEY not in repr(cache._kept.keys())
    cache.close()


def test_idle_clients_past_the_bound_are_closed_and_one_in_use_never(stub_env: dict[str, str]) -> None:
    cache = ClientCache(max_idle=1)
    endpoints = [_endpoint(stub_env, key=f"{CANARY_KEY}-{i}") for i in range(3)]
    with cache.client(endpoints[0], 10.0) as busy:
        with cache.client(endpoints[1], 10.0) as first, cache.client(endpoints[2], 10.0) as second:
            pass
        assert first.is_closed() and not second.is_closed()  # the least recently used idle one went
        cache.close()
        assert second.is_closed() and not busy.is_closed()
    cache.close()
    assert busy.is_closed()


def test_threads_asking_at_once_get_one_client(stub_env: dict[str, str]) -> None:
    cache = ClientCache()
    endpoint = _endpoint(stub_env)
    got: list[Any] = []
    start = threading.Barrier(8)

    def ask() -> None:
        start.wait()
        with cache.client(endpoint, 10.0) as client:
            got.append(client)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(c) for c in got}) == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache.close()
        gc.collect()  # the clients built and dropped by the threads that lost the race were closed
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []
