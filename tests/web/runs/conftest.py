"""Fixtures of the runs slice's tests: the stub provider and the environment pointing every provider at it."""

from __future__ import annotations

from tests.replay.conftest import stub, stub_env  # noqa: F401 - fixtures shared with the replay tests
