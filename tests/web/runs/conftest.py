"""Fixtures of the runs slice's tests: the environment pointing every provider at the stub provider."""

from __future__ import annotations

from tests.replay.conftest import stub_env  # noqa: F401 - a fixture shared with the replay tests
