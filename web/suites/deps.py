"""The suites slice's dependency: the app's one ``SuiteStarts``, made on first use and kept in the app's state."""

from __future__ import annotations

import threading

from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.params import SkipValidation

from web.deps import RunsDep
from web.suites.service import SuiteStarts

SuitesDep = NamedDependency[SkipValidation[SuiteStarts]]

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
