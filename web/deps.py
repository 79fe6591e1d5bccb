"""Dependency types for handlers: the source, the payload builder and the settings are trusted objects.

Litestar validates handler arguments with msgspec; objects built by ``create_app``
must pass through untouched, hence ``SkipValidation``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.enums import RequestEncodingType
from litestar.params import Body, SkipValidation

from web.heavy import HeavyWork
from web.payloads.builder import PayloadBuilder
from web.runs.service import RunService
from web.settings import Settings
from web.source import StoreSource
from web.suites.service import SuiteStarts

SourceDep = NamedDependency[SkipValidation[StoreSource]]
SettingsDep = NamedDependency[SkipValidation[Settings]]
PayloadsDep = NamedDependency[SkipValidation[PayloadBuilder]]
HeavyDep = NamedDependency[SkipValidation[HeavyWork]]
RunsDep = NamedDependency[SkipValidation[RunService]]
SuitesDep = NamedDependency[SkipValidation[SuiteStarts]]

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
"""A form post's body (``Annotated[SomeData, FORM]``); the CSRF middleware has checked its token."""


@dataclass
class ReplayFields:
    """The fields every replay form posts (``web.runs.views.ReplayForm`` renders them), as text."""

    provider: str = ""
    model: str = ""
    idempotency_key: str = ""
    model_as_typed: str = ""
    """"1" when the reader typed the model on purpose (the form's "as typed" box)."""

    @property
    def as_typed(self) -> bool:
        return self.model_as_typed == "1"


_SUITES_STATE = "suite_starts"
_suites_made = threading.Lock()


def _suite_starts(state: State, run_service: RunsDep) -> SuiteStarts:
    """The app's one SuiteStarts (its idempotency keys must outlive a request), made on first use.

    Suite runs go to the queue Re-run uses, so they share its workers, its environment and its shutdown.
    """
    with _suites_made:
        found = state.get(_SUITES_STATE)
        if not isinstance(found, SuiteStarts):
            found = SuiteStarts(run_service.store, run_service.queue, run_service.choices)
            state[_SUITES_STATE] = found
    return found


SUITES_PROVIDER = Provide(_suite_starts, sync_to_thread=False)
"""``suites``: registered by the suites slice's controllers (one instance per app, kept in the app's state)."""
