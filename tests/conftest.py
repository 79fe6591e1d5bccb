"""Shared fixtures and the loopback-only network guard."""

from __future__ import annotations

import gc
import ipaddress
import logging
import os
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from web.devtools.stub_provider import StubServer

# CI replays the same examples on every run (a landing must not hinge on a lucky draw); local runs
# explore fresh ones, and what they find is pinned with @example next to the property.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")

_real_connect = socket.socket.connect


def _is_loopback(address: Any) -> bool:
    if isinstance(address, str):  # a unix socket path
        return True
    host = address[0] if isinstance(address, tuple) else address
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail any test that opens a connection to anything but loopback."""

    def guarded(self: socket.socket, address: Any) -> Any:
        if not _is_loopback(address):
            raise AssertionError(f"test tried to reach {address!r}: only loopback is allowed")
        return _real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield


@pytest.fixture(autouse=True)
def _loggers_put_back() -> Iterator[None]:
    """Every app Litestar builds sets the root and ``litestar`` loggers' handlers on the stderr pytest captured for
    that test; a record logged after the session (at exit) would meet that closed stream as a logging error."""
    loggers = [logging.getLogger(), logging.getLogger("litestar")]
    kept = [(logger.handlers[:], logger.level, logger.propagate) for logger in loggers]
    yield
    for logger, (handlers, level, propagate) in zip(loggers, kept, strict=True):
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate


@pytest.fixture
def result_before_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """An adapter bug, simulated: OpenAI's first tool result is sent before the assistant turn that made its
    call (preflight's result-before-call rule). A body with no tool call is left as it is."""
    from core.providers import get_dialect
    from core.providers.base import JSON

    dialect = get_dialect("openai")
    assemble = type(dialect).assemble

    def misplaced(self: Any, params: JSON, fragments: JSON, ctx: Any) -> JSON:
        body = assemble(self, params, fragments, ctx)
        msgs = body["messages"]
        call = next((i for i, m in enumerate(msgs) if m.get("tool_calls")), None)
        if call is not None:
            msgs[call], msgs[call + 1] = msgs[call + 1], msgs[call]
        return body

    monkeypatch.setattr(type(dialect), "assemble", misplaced)


@pytest.fixture
def stub() -> Iterator[StubServer]:
    """The loopback stand-in for the LLM providers, started for one test."""
    from web.devtools.stub_provider import StubServer

    server = StubServer().start()
    yield server
    server.shutdown()
    server.server_close()


def pytest_configure(config: pytest.Config) -> None:
    """Empty SQLite stores start from a copy of one migrated file (``tests.migrated_template``), migrated
    PostgreSQL databases from a copy of one migrated database (``tests.store.store_pg``)."""
    from core.store import schema
    from tests.migrated_template import TEMPLATE

    schema.upgrade = TEMPLATE.upgrade


def pytest_collection_finish(session: pytest.Session) -> None:
    """Every module the tests import is loaded by now (the SDKs, Litestar, the seed's models): freezing them out of
    the cyclic collector's sight spares each full collection during the run a rescan of them all."""
    gc.freeze()


def pytest_unconfigure(config: pytest.Config) -> None:
    from tests.migrated_template import TEMPLATE
    from tests.store.store_pg import drop_migrated_template

    TEMPLATE.remove()
    drop_migrated_template()


@pytest.fixture(autouse=True, scope="module")
def _real_migrations_where_asked(request: pytest.FixtureRequest) -> Iterator[None]:
    """A module that sets ``REAL_MIGRATIONS = True`` runs every first upgrade through the migrations themselves."""
    if not getattr(request.module, "REAL_MIGRATIONS", False):
        yield
        return
    from core.store import schema
    from tests.migrated_template import REAL_UPGRADE

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(schema, "upgrade", REAL_UPGRADE)
        yield
